//go:build unix

package freedesktop

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/notifytest"
)

func TestNotifierOnTestBus(t *testing.T) {
	bus := notifytest.Start(t)
	n := &Notifier{Address: bus.Address()}
	if err := n.Notify(context.Background(), "deskhand stopped", "body text"); err != nil {
		t.Fatal(err)
	}
	got, err := bus.Wait(1, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].AppName != "deskhand" || got[0].Summary != "deskhand stopped" || got[0].Body != "body text" {
		t.Fatalf("notification = %+v", got[0])
	}
}

func TestNotifierNoBus(t *testing.T) {
	n := &Notifier{Address: "unix:path=" + t.TempDir() + "/no-bus"}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := n.Notify(ctx, "s", "b"); err == nil {
		t.Fatal("Notify to a bus address that does not exist: no error")
	}
}

func TestSessionBusAddress(t *testing.T) {
	dir := t.TempDir()
	if a, err := SessionBusAddress([]string{"DBUS_SESSION_BUS_ADDRESS=unix:path=/x"}); err != nil || a != "unix:path=/x" {
		t.Errorf("with the variable: %q, %v", a, err)
	}
	if _, err := SessionBusAddress([]string{"XDG_RUNTIME_DIR=" + dir}); !errors.Is(err, ErrNoSessionBus) {
		t.Errorf("without a bus socket: %v, want ErrNoSessionBus", err)
	}
}
