package freedesktop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/godbus/dbus/v5"
)

// ErrNoSessionBus means there is no D-Bus session bus to notify on.
var ErrNoSessionBus = errors.New("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is unset and $XDG_RUNTIME_DIR/bus does not exist)")

// SessionBusAddress returns the session bus address from env (KEY=value
// entries; nil means the process environment): DBUS_SESSION_BUS_ADDRESS,
// else the systemd user bus socket $XDG_RUNTIME_DIR/bus. It never starts a
// bus (godbus's SessionBus would run dbus-launch when the variable is
// unset, leaving a daemon behind).
func SessionBusAddress(env []string) (string, error) {
	get := os.Getenv
	if env != nil {
		get = func(key string) string {
			v := ""
			for _, kv := range env {
				if len(kv) > len(key) && kv[:len(key)] == key && kv[len(key)] == '=' {
					v = kv[len(key)+1:]
				}
			}
			return v
		}
	}
	if a := get("DBUS_SESSION_BUS_ADDRESS"); a != "" {
		return a, nil
	}
	if dir := get("XDG_RUNTIME_DIR"); filepath.IsAbs(dir) {
		sock := filepath.Join(dir, "bus")
		if fi, err := os.Stat(sock); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return "unix:path=" + sock, nil
		}
	}
	return "", ErrNoSessionBus
}

// Notifier sends desktop notifications through the freedesktop.org
// notification service (org.freedesktop.Notifications) on a session bus.
type Notifier struct {
	// Address is the bus address; "" means SessionBusAddress(nil) at
	// each notification.
	Address string
	// AppName is the sending application's name; "" means "deskhand".
	AppName string
}

// Notify shows one notification. It connects for this one message: turns
// end rarely, and a connection kept open would outlive a bus that restarts.
func (n *Notifier) Notify(ctx context.Context, summary, body string) error {
	addr := n.Address
	if addr == "" {
		var err error
		if addr, err = SessionBusAddress(nil); err != nil {
			return err
		}
	}
	conn, err := dbus.Connect(addr, dbus.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("connecting to the session bus %s: %w", addr, err)
	}
	defer conn.Close()
	app := n.AppName
	if app == "" {
		app = "deskhand"
	}
	hints := map[string]dbus.Variant{
		"urgency":       dbus.MakeVariant(byte(1)), // normal
		"desktop-entry": dbus.MakeVariant("deskhand"),
	}
	obj := conn.Object("org.freedesktop.Notifications", "/org/freedesktop/Notifications")
	var id uint32
	call := obj.CallWithContext(ctx, "org.freedesktop.Notifications.Notify", 0,
		app, uint32(0), "dialog-information", summary, body, []string{}, hints, int32(-1))
	if err := call.Store(&id); err != nil {
		return fmt.Errorf("sending the desktop notification: %w", err)
	}
	return nil
}
