package x11

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/deskhand/deskhand/supervisor/cleanup"
)

// KeepFlag runs the capture helper as the clipboard keeper. An X
// selection lives only as long as the client that owns it, so text put
// back by the helper that serves deskhand (and exits with it) would
// vanish at once. deskhand instead runs the helper binary once more with
// this flag, in a session of its own: it owns the text (in UTF-8 and
// Latin-1, large text through INCR, as clipboard_write does) until other
// clients have taken every selection it keeps, as xclip does. The helper
// is the only X selection owner deskhand has (helpers/PROTOCOL.md, "The
// clipboard keeper").
const KeepFlag = "--keep-clipboard"

// MaxKeptBytes bounds the text a keeper serves per selection: the
// helper's limit on a clipboard_write.
const MaxKeptBytes = 1 << 20

// ErrTooLargeToKeep is returned by Keep for text over MaxKeptBytes.
var ErrTooLargeToKeep = fmt.Errorf("clipboard text over %d bytes cannot be kept after deskhand exits", MaxKeptBytes)

// keepRequest is what the keeper reads on stdin; a nil selection is not
// kept.
type keepRequest struct {
	Clipboard *string `json:"clipboard,omitempty"`
	Primary   *string `json:"primary,omitempty"`
}

// Keep starts a keeper for the clipboard and PRIMARY clips of s that have
// Had set (the cut buffer needs none: it outlives its writer), on X
// display display, and returns once it owns their selections. The keeper
// is the capture helper at helper run with KeepFlag.
func Keep(ctx context.Context, helper, display string, s cleanup.Stash) error {
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
		return err
	}
	cmd := exec.Command(helper, KeepFlag)
	cmd.Env = append(os.Environ(), "DISPLAY="+display)
	cmd.Stdin = strings.NewReader(string(in))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
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
			cmd.Process.Kill()
			cmd.Wait()
			if line == "" {
				line = "no answer (is the helper older than --keep-clipboard?)"
			}
			return fmt.Errorf("the clipboard keeper failed: %s", line)
		}
	case <-ctx.Done():
		cmd.Process.Kill()
		cmd.Wait()
		return fmt.Errorf("the clipboard keeper did not take the clipboard: %w", context.Cause(ctx))
	}
	// Not waited for: it lives on after deskhand, and init reaps it.
	return cmd.Process.Release()
}
