package freedesktop

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// KeepFlag runs the capture helper as the clipboard keeper, on X11 and on
// Wayland alike: a selection lives only as long as the client that owns
// it, so text put back by the helper that serves deskhand (and exits with
// it) would vanish with deskhand. The keeper owns it until other clients
// have taken every selection it keeps (helpers/PROTOCOL.md, "The clipboard
// keeper").
const KeepFlag = "--keep-clipboard"

// keepRequest is what the keeper reads on stdin; a nil selection is not
// kept.
type keepRequest struct {
	Clipboard *string `json:"clipboard,omitempty"`
	Primary   *string `json:"primary,omitempty"`
}

// StartKeeper runs the capture helper at helper with KeepFlag and
// environment env, in a session of its own so that it outlives deskhand,
// hands it the selections to keep (nil ones are not kept; with none it
// does nothing), and returns once it says it owns them. oldHelper is the
// reason to give when the keeper answers nothing at all.
func StartKeeper(ctx context.Context, helper string, env []string, clipboard, primary *string, oldHelper string) error {
	req := keepRequest{Clipboard: clipboard, Primary: primary}
	if req.Clipboard == nil && req.Primary == nil {
		return nil
	}
	if helper == "" {
		return errors.New("keeping the clipboard after deskhand exits: no capture helper to keep it (it was never started)")
	}
	in, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encoding the text to keep: %w", err)
	}
	cmd := exec.Command(helper, KeepFlag)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(string(in))
	ownSession(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("starting the clipboard keeper: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the clipboard keeper: %w", err)
	}
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		answer <- strings.TrimSpace(line)
	}()
	select {
	case line := <-answer:
		if line != "ready" {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			if line == "" {
				line = "no answer (" + oldHelper + ")"
			}
			return fmt.Errorf("the clipboard keeper failed: %s", line)
		}
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("the clipboard keeper did not take the clipboard: %w", context.Cause(ctx))
	}
	// Not waited for: it lives on after deskhand, and init reaps it.
	return cmd.Process.Release()
}
