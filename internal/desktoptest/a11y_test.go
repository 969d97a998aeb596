//go:build unix

package desktoptest

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestAccessibility starts the AT-SPI stack on a desktop, then GTK 3 and
// GTK 4 apps, and checks with gdbus (independent of the helper) that both
// registered with the registry on the private accessibility bus, and that
// teardown leaves none of the buses behind.
func TestAccessibility(t *testing.T) {
	Require(t, "Xvfb", "openbox", "gdbus", "gtk3-widget-factory", "gtk4-widget-factory")
	d := Start(t, Options{})
	a := d.StartAccessibility(t)
	if !strings.HasPrefix(a.SessionBus, "unix:") || !strings.HasPrefix(a.Bus, "unix:") {
		t.Fatalf("buses = %q, %q; want unix: addresses", a.SessionBus, a.Bus)
	}
	if again := d.StartAccessibility(t); again != a {
		t.Errorf("a second StartAccessibility started another stack")
	}
	for _, app := range []App{GTK3WidgetFactory(), GTK4WidgetFactory()} {
		w := d.StartApp(t, app)
		if w.PID == 0 {
			t.Fatalf("%s window %#x has no _NET_WM_PID", app.Name, w.ID)
		}
		// An app registers with the registry asynchronously after it maps.
		deadline := time.Now().Add(30 * time.Second)
		for {
			names := d.registeredApps(t, a)
			if strings.Contains(names, app.Name) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s (pid %d) is not among the registry's apps after 30s: %s", app.Name, w.PID, names)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	env := strings.Join(d.AppEnv(), "\n")
	for _, want := range []string{"DBUS_SESSION_BUS_ADDRESS=" + a.SessionBus, "GTK_A11Y=atspi", "QT_ACCESSIBILITY=1"} {
		if !strings.Contains(env, want+"\n") {
			t.Errorf("AppEnv lacks %s", want)
		}
	}
	if strings.Contains(env, "NO_AT_BRIDGE") {
		t.Errorf("AppEnv still sets NO_AT_BRIDGE")
	}
	d.Close()
	if d.closeErr != nil {
		t.Fatalf("Close: %v", d.closeErr)
	}
	if left := TaggedProcesses(d.ID()); len(left) != 0 {
		t.Errorf("processes %v outlive Close", left)
	}
}

// registeredApps returns the names of the registry's children, as gdbus
// prints them.
func (d *Desktop) registeredApps(t *testing.T, a *Accessibility) string {
	t.Helper()
	out, err := d.gdbus(10*time.Second, "--address", a.Bus, "--dest", "org.a11y.atspi.Registry",
		"--object-path", "/org/a11y/atspi/accessible/root", "--method", "org.a11y.atspi.Accessible.GetChildren")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range strings.Split(out, "(") {
		// ('(:1.5', objectpath '/org/a11y/atspi/accessible/root'), ...
		parts := strings.SplitN(f, "'", 5)
		if len(parts) < 4 || !strings.HasPrefix(parts[1], ":") {
			continue
		}
		name, err := d.gdbus(10*time.Second, "--address", a.Bus, "--dest", parts[1],
			"--object-path", parts[3], "--method", "org.freedesktop.DBus.Properties.Get",
			"org.a11y.atspi.Accessible", "Name")
		if err != nil {
			names = append(names, fmt.Sprintf("%s(%v)", parts[1], err))
			continue
		}
		names = append(names, strings.TrimSpace(name))
	}
	return strings.Join(names, ", ")
}
