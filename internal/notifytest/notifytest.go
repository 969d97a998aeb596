//go:build unix

// Package notifytest runs a private D-Bus session bus for tests, with a
// notification service on it that records every notification it is sent
// through the freedesktop.org interface (org.freedesktop.Notifications).
//
// The bus is a real dbus-daemon started with the session configuration on
// a socket in the test's temporary directory; the test ends it. A test
// that needs it is skipped when dbus-daemon is missing, and fails instead
// under CI.
package notifytest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// Notification is one call of Notify.
type Notification struct {
	AppName string
	Summary string
	Body    string
	Hints   map[string]dbus.Variant
	Timeout int32
}

// Bus is a running private session bus with the recording service.
type Bus struct {
	addr string
	conn *dbus.Conn

	mu    sync.Mutex
	got   []Notification
	cond  chan struct{}
	next  uint32
	owner bool
}

// Start starts a bus and the service for t; both stop when t ends.
func Start(t testing.TB) *Bus {
	t.Helper()
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("dbus-daemon is not installed (apt-get install dbus); CI is set, so this is a failure")
		}
		t.Skip("dbus-daemon is not installed (apt-get install dbus)")
	}
	dir, err := os.MkdirTemp("", "deskhand-bus-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "bus")
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1", "--address=unix:path="+sock)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSig(cmd.SysProcAttr, syscall.SIGKILL)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting dbus-daemon: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		lines <- strings.TrimSpace(line)
	}()
	var addr string
	select {
	case addr = <-lines:
	case <-time.After(10 * time.Second):
		t.Fatalf("dbus-daemon did not print its address within 10 s; its stderr: %s", stderr.String())
	}
	if addr == "" {
		t.Fatalf("dbus-daemon printed no address; its stderr: %s", stderr.String())
	}
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatalf("connecting to the test bus %s: %v", addr, err)
	}
	t.Cleanup(func() { conn.Close() })
	b := &Bus{addr: addr, conn: conn, cond: make(chan struct{})}
	if err := conn.Export(service{b}, "/org/freedesktop/Notifications", "org.freedesktop.Notifications"); err != nil {
		t.Fatal(err)
	}
	reply, err := conn.RequestName("org.freedesktop.Notifications", dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("taking org.freedesktop.Notifications on the test bus: %v (reply %v)", err, reply)
	}
	return b
}

// Address is the bus address, for DBUS_SESSION_BUS_ADDRESS.
func (b *Bus) Address() string { return b.addr }

// Notifications returns what the service has received so far.
func (b *Bus) Notifications() []Notification {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Notification(nil), b.got...)
}

// Wait waits until at least n notifications arrived and returns them all.
func (b *Bus) Wait(n int, within time.Duration) ([]Notification, error) {
	deadline := time.After(within)
	for {
		b.mu.Lock()
		got := append([]Notification(nil), b.got...)
		ch := b.cond
		b.mu.Unlock()
		if len(got) >= n {
			return got, nil
		}
		select {
		case <-ch:
		case <-deadline:
			return got, fmt.Errorf("%d notifications after %s, want %d", len(got), within, n)
		}
	}
}

type service struct{ b *Bus }

// Notify implements org.freedesktop.Notifications.Notify.
func (s service) Notify(app string, replaces uint32, icon, summary, body string, actions []string, hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	b := s.b
	b.mu.Lock()
	defer b.mu.Unlock()
	b.got = append(b.got, Notification{AppName: app, Summary: summary, Body: body, Hints: hints, Timeout: timeout})
	close(b.cond)
	b.cond = make(chan struct{})
	b.next++
	return b.next, nil
}

// GetCapabilities implements the method clients may ask first.
func (s service) GetCapabilities() ([]string, *dbus.Error) { return []string{"body"}, nil }

// GetServerInformation names the service.
func (s service) GetServerInformation() (string, string, string, string, *dbus.Error) {
	return "deskhand-notifytest", "deskhand", "1", "1.2", nil
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
