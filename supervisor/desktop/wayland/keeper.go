package wayland

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"

	"github.com/deskhand/deskhand/supervisor/cleanup"
)

// KeepFlag runs the capture helper as the clipboard keeper, on Wayland as
// on X11: a wlr-data-control source lives only as long as the client that
// made it, so text put back by the helper that serves deskhand (and exits
// with it) would vanish with deskhand. The keeper owns it, in every UTF-8
// text type, until other clients have taken each selection it keeps, as
// wl-copy does (helpers/PROTOCOL.md, "Wayland (wlroots)").
const KeepFlag = "--keep-clipboard"

// MaxKeptBytes bounds the text a keeper serves per selection: the most a
// clipboard read returns, so any stashed text can be kept.
const MaxKeptBytes = 16 << 20

// ErrTooLargeToKeep is returned by Keep for text over MaxKeptBytes.
var ErrTooLargeToKeep = fmt.Errorf("clipboard text over %d bytes cannot be kept after deskhand exits", MaxKeptBytes)

// keepRequest is what the keeper reads on stdin; a nil selection is not
// kept.
type keepRequest struct {
	Clipboard *string `json:"clipboard,omitempty"`
	Primary   *string `json:"primary,omitempty"`
}

// Keep starts a keeper for the clipboard and primary clips of s that have
// Had set, in the Wayland session of env (KEY=value), and returns once it
// owns them. The keeper is the capture helper at helper run with KeepFlag,
// in a session of its own so that it outlives deskhand.
func Keep(ctx context.Context, helper string, env []string, s cleanup.Stash) error {
	if len(s.Clipboard.Text) > MaxKeptBytes || len(s.Primary.Text) > MaxKeptBytes {
		return ErrTooLargeToKeep
	}
	var req keepRequest
	if s.Clipboard.Had {
		req.Clipboard = &s.Clipboard.Text
	}
	if s.Primary.Had {
		req.Primary = &s.Primary.Text
	}
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
	cmd.Env = append(keeperBase(env), HelperEnv(env)...)
	cmd.Stdin = strings.NewReader(string(in))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
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
				line = "no answer (is the helper older than --keep-clipboard on Wayland?)"
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

// keeperBase is what of env the keeper keeps besides the session's
// sockets: its log level and the locale, nothing that names a display.
func keeperBase(env []string) []string {
	var out []string
	for _, k := range []string{"PATH", "HOME", "LANG", "DESKHAND_HELPER_LOG"} {
		if v := getenv(env, k); v != "" {
			out = append(out, k+"="+v)
		}
	}
	return out
}
