package x11

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/deskhand/deskhand/supervisor/cleanup"
)

// KeeperCommand is the hidden deskhand command that keeps the clipboard:
// deskhand runs itself with it when it restores the user's clipboard (and
// PRIMARY selection) just before exiting. An X selection lives only as
// long as the client that owns it, so text put back by the capture helper
// (which exits with deskhand) would vanish at once; the keeper owns it
// instead, in its own session, until other clients have taken every
// selection it keeps, as xclip does.
const KeeperCommand = "clipboard-keeper"

// MaxKeptBytes bounds the text a keeper serves per selection: one X
// request carries it
// (no INCR transfers), and the core protocol's request limit is 256 KiB.
const MaxKeptBytes = 200 * 1024

// ErrTooLargeToKeep is returned by HandOff for text over MaxKeptBytes.
var ErrTooLargeToKeep = fmt.Errorf("clipboard text over %d bytes cannot be kept after deskhand exits", MaxKeptBytes)

// HandOff starts a keeper for text on the clipboard of X display
// display; see Keep.
func HandOff(ctx context.Context, exe, display, text string) error {
	return Keep(ctx, exe, display, cleanup.Stash{Clipboard: cleanup.Clip{Text: text, Had: true}})
}

// Keep starts a keeper for the clipboard and PRIMARY clips of s that have
// Had set (the cut buffer needs none: it outlives its writer), on X
// display display, and returns once it owns their selections. The keeper is the
// program at exe (deskhand itself; "" means os.Executable) run with
// KeeperCommand, in a session of its own so it outlives deskhand.
func Keep(ctx context.Context, exe, display string, s cleanup.Stash) error {
	if len(s.Clipboard.Text) > MaxKeptBytes || len(s.Primary.Text) > MaxKeptBytes {
		return ErrTooLargeToKeep
	}
	s.CutBuffer = cleanup.Clip{}
	if !s.Clipboard.Had && !s.Primary.Had {
		return nil
	}
	in, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return fmt.Errorf("finding deskhand's executable for the clipboard keeper: %w", err)
		}
	}
	cmd := exec.Command(exe, KeeperCommand)
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

// maxKeeperInput bounds the keeper's JSON input: two selections of
// MaxKeptBytes each, every byte escaped as \u00XX at worst.
const maxKeeperInput = 2*6*MaxKeptBytes + 1024

// RunKeeper is the keeper's main: it reads a Stash as JSON from in, takes
// the selections of $DISPLAY that it has text for, writes "ready" (or
// "error: …") to out and serves the text until other clients have taken
// them all. It returns the exit status.
func RunKeeper(in io.Reader, out io.Writer) int {
	var s cleanup.Stash
	data, err := io.ReadAll(io.LimitReader(in, maxKeeperInput+1))
	switch {
	case err != nil:
	case len(data) > maxKeeperInput:
		err = ErrTooLargeToKeep
	default:
		err = json.Unmarshal(data, &s)
	}
	if err == nil && (len(s.Clipboard.Text) > MaxKeptBytes || len(s.Primary.Text) > MaxKeptBytes) {
		err = ErrTooLargeToKeep
	}
	if err != nil {
		fmt.Fprintf(out, "error: %v\n", err)
		return 1
	}
	serve, err := keepSelections(os.Getenv("DISPLAY"), s)
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

// errLostClipboard ends a keeper normally: other clients took every
// selection it kept.
var errLostClipboard = errors.New("other clients took the selections")
