//go:build unix

package x11

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// setupOnlyProxy listens on a socket of its own and relays each client to
// the X server of display, but passes back only the connection setup reply:
// after it, the server seems to stop answering, as one stopped (SIGSTOP)
// between doctor's connect and its extension queries would. It returns the
// display name to connect to.
func setupOnlyProxy(t *testing.T, display string) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "x") + ":0"
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	server := "/tmp/.X11-unix/X" + strings.TrimPrefix(display, ":")
	go func() {
		for {
			client, err := l.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("unix", server)
			if err != nil {
				client.Close()
				continue
			}
			t.Cleanup(func() { client.Close(); up.Close() })
			go io.Copy(up, client)
			go func() {
				// The setup reply: 8 bytes whose last two count the 4-byte
				// units that follow.
				head := make([]byte, 8)
				if _, err := io.ReadFull(up, head); err != nil {
					return
				}
				rest := make([]byte, 4*int(binary.LittleEndian.Uint16(head[6:])))
				if _, err := io.ReadFull(up, rest); err != nil {
					return
				}
				client.Write(append(head, rest...))
				io.Copy(io.Discard, up) // every later reply is withheld
			}()
		}
	}()
	return sock
}

// TestProbeDeadlineAfterSetup: a server that completes the connection
// setup and then answers nothing makes the probe, and so doctor and the
// display gate, fail with "does not answer" instead of waiting on it.
func TestProbeDeadlineAfterSetup(t *testing.T) {
	desktoptest.Require(t, "Xvfb")
	d := desktoptest.Start(t, desktoptest.Options{WindowManager: "none"})
	if _, conn, err := ProbeDisplay(context.Background(), d.Display()); err != nil {
		t.Fatalf("probing Xvfb directly: %v", err)
	} else {
		conn.Close()
	}
	mute := setupOnlyProxy(t, d.Display())

	type result struct {
		p   *Probe
		err error
	}
	done := make(chan result, 1)
	go func() {
		p, conn, err := ProbeDisplay(context.Background(), mute)
		if conn != nil {
			conn.Close()
		}
		done <- result{p, err}
	}()
	// Not a timing assertion: without a deadline the probe never returns,
	// and this bound only keeps the test from hanging too.
	select {
	case r := <-done:
		if r.err == nil || !strings.Contains(r.err.Error(), "does not answer") || !strings.Contains(r.err.Error(), mute) {
			t.Errorf("probe of a server that stops answering after the setup = %+v, %v; want it to say the display does not answer", r.p, r.err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the probe still waits on a server that stopped answering after the setup")
	}

	check := NewDisplayCheck(mute)
	defer check.Close()
	if err := check.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "does not answer") {
		t.Errorf("display gate on a server that stops answering after the setup: %v", err)
	}
}
