package cleanup

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// KeeperCommand is the hidden deskhand command that keeps the clipboard:
// deskhand runs itself with it when it restores the user's clipboard just
// before exiting. An X selection lives only as long as the client that
// owns it, so text put back by the capture helper (which exits with
// deskhand) would vanish at once; the keeper owns it instead, in its own
// session, until another client takes the clipboard, as xclip does.
const KeeperCommand = "clipboard-keeper"

// MaxKeptBytes bounds the text a keeper serves: one X request carries it
// (no INCR transfers), and the core protocol's request limit is 256 KiB.
const MaxKeptBytes = 200 * 1024

// ErrTooLargeToKeep is returned by HandOff for text over MaxKeptBytes.
var ErrTooLargeToKeep = fmt.Errorf("clipboard text over %d bytes cannot be kept after deskhand exits", MaxKeptBytes)

// HandOff starts a keeper for text on X display display and returns once
// it owns the clipboard. The keeper is the program at exe (deskhand
// itself; "" means os.Executable) run with KeeperCommand, in a session of
// its own so it outlives deskhand.
func HandOff(ctx context.Context, exe, display, text string) error {
	if len(text) > MaxKeptBytes {
		return ErrTooLargeToKeep
	}
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return fmt.Errorf("finding deskhand's executable for the clipboard keeper: %w", err)
		}
	}
	cmd := exec.Command(exe, KeeperCommand)
	cmd.Env = append(os.Environ(), "DISPLAY="+display)
	cmd.Stdin = strings.NewReader(text)
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
				line = "no answer"
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

// RunKeeper is the keeper's main: it reads the text from in, takes the
// clipboard of $DISPLAY, writes "ready" (or "error: …") to out and
// serves the text until another client takes the clipboard. It returns
// the exit status.
func RunKeeper(in io.Reader, out io.Writer) int {
	data, err := io.ReadAll(io.LimitReader(in, MaxKeptBytes+1))
	if err == nil && len(data) > MaxKeptBytes {
		err = ErrTooLargeToKeep
	}
	if err != nil {
		fmt.Fprintf(out, "error: %v\n", err)
		return 1
	}
	serve, err := keepClipboard(os.Getenv("DISPLAY"), string(data))
	if err != nil {
		fmt.Fprintf(out, "error: %v\n", err)
		return 1
	}
	fmt.Fprintln(out, "ready")
	if c, ok := out.(io.Closer); ok {
		c.Close()
	}
	// Nothing more is written anywhere: the parent is gone.
	if null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0); err == nil {
		syscall.Dup2(int(null.Fd()), 1)
		syscall.Dup2(int(null.Fd()), 2)
	}
	if err := serve(); err != nil && !errors.Is(err, errLostClipboard) {
		return 1
	}
	return 0
}

// errLostClipboard ends a keeper normally: another client took the
// clipboard.
var errLostClipboard = errors.New("another client took the clipboard")
