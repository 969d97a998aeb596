//go:build unix

package desktoptest

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Monitor is a RandR 1.5 monitor: a named rectangle of the screen.
type Monitor struct {
	Name                string
	X, Y, Width, Height int
	Primary             bool

	// WidthMM and HeightMM are the physical size. SetMonitors derives them
	// from the pixel size at 96 DPI when zero; Monitors reports them.
	WidthMM, HeightMM int
	// Automatic is set by Monitors for the server's own monitor of an
	// output (shown with "+" by xrandr); SetMonitors ignores it.
	Automatic bool
	// Outputs are the RandR outputs of the monitor, as Monitors reads them.
	Outputs []string
}

// Rect returns the monitor's rectangle.
func (m Monitor) Rect() Rect { return Rect{m.X, m.Y, m.Width, m.Height} }

func (m Monitor) String() string {
	s := fmt.Sprintf("%s %dx%d+%d+%d", m.Name, m.Width, m.Height, m.X, m.Y)
	if m.Primary {
		s += " primary"
	}
	return s
}

// mmAt96DPI converts pixels to millimetres at 96 DPI, Xvfb's own choice
// for its "screen" output.
func mmAt96DPI(px int) int { return (px*254 + 480) / 960 }

var monitorLine = regexp.MustCompile(`^\s*\d+:\s+(\+?)(\*?)(\S+)\s+(\d+)/(\d+)x(\d+)/(\d+)\+(-?\d+)\+(-?\d+)(?:\s+(.*))?$`)

// ParseListMonitors parses the output of `xrandr --listmonitors`.
func ParseListMonitors(out string) ([]Monitor, error) {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "Monitors:") {
		return nil, fmt.Errorf("xrandr --listmonitors output does not start with \"Monitors:\": %q", out)
	}
	want, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(lines[0], "Monitors:")))
	if err != nil {
		return nil, fmt.Errorf("parsing monitor count in %q: %w", lines[0], err)
	}
	var ms []Monitor
	for _, line := range lines[1:] {
		m := monitorLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("unexpected xrandr --listmonitors line %q", line)
		}
		n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
		mon := Monitor{
			Name: m[3], Automatic: m[1] == "+", Primary: m[2] == "*",
			Width: n(4), WidthMM: n(5), Height: n(6), HeightMM: n(7), X: n(8), Y: n(9),
		}
		if outs := strings.Fields(m[10]); len(outs) > 0 {
			mon.Outputs = outs
		}
		ms = append(ms, mon)
	}
	if len(ms) != want {
		return nil, fmt.Errorf("xrandr --listmonitors announced %d monitors and listed %d: %q", want, len(ms), out)
	}
	return ms, nil
}

// Monitors returns the monitors as `xrandr --listmonitors` shows them, in
// its order.
func (d *Desktop) Monitors(t testing.TB) []Monitor {
	t.Helper()
	ms, err := d.monitors()
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func (d *Desktop) monitors() ([]Monitor, error) {
	out, err := d.output(10*time.Second, "xrandr", "--listmonitors")
	if err != nil {
		return nil, err
	}
	return ParseListMonitors(out)
}

// SetMonitors replaces the monitors with ms (xrandr --setmonitor), after
// deleting every existing non-automatic monitor, and waits until
// `xrandr --listmonitors` shows exactly ms. One monitor (the primary one,
// else the first) takes the screen's real output, which removes the
// automatic whole-screen monitor; the others get "none". An empty ms
// restores the automatic monitor.
func (d *Desktop) SetMonitors(t testing.TB, ms []Monitor) {
	t.Helper()
	Require(t, "xrandr")
	if err := d.setMonitors(ms); err != nil {
		t.Fatal(err)
	}
}

func (d *Desktop) setMonitors(ms []Monitor) error {
	cur, err := d.monitors()
	if err != nil {
		return err
	}
	for _, m := range cur {
		if m.Automatic {
			continue
		}
		if _, err := d.output(10*time.Second, "xrandr", "--delmonitor", m.Name); err != nil {
			return fmt.Errorf("deleting monitor %s: %w", m.Name, err)
		}
	}
	if len(ms) > 0 {
		output, err := d.firstOutput()
		if err != nil {
			return err
		}
		owner := 0
		for i, m := range ms {
			if m.Primary {
				owner = i
				break
			}
		}
		for i, m := range ms {
			if m.Name == "" || strings.ContainsAny(m.Name, " \t\n") || strings.HasPrefix(m.Name, "*") || m.Width <= 0 || m.Height <= 0 {
				return fmt.Errorf("monitor %d (%v): needs a name without spaces or leading '*' and a positive size", i, m)
			}
			wmm, hmm := m.WidthMM, m.HeightMM
			if wmm <= 0 {
				wmm = mmAt96DPI(m.Width)
			}
			if hmm <= 0 {
				hmm = mmAt96DPI(m.Height)
			}
			name := m.Name
			if m.Primary {
				name = "*" + name // xrandr's syntax for "make it primary"
			}
			out := "none"
			if i == owner {
				out = output
			}
			geom := fmt.Sprintf("%d/%dx%d/%d+%d+%d", m.Width, wmm, m.Height, hmm, m.X, m.Y)
			if _, err := d.output(10*time.Second, "xrandr", "--setmonitor", name, geom, out); err != nil {
				return fmt.Errorf("adding monitor %v: %w", m, err)
			}
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err := d.monitors()
		if err != nil {
			return err
		}
		if sameMonitors(got, ms) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after 5s xrandr --listmonitors shows %v, want %v", got, ms)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sameMonitors compares names, geometry and primary flags, in any order.
// An empty want matches any list made only of automatic monitors.
func sameMonitors(got, want []Monitor) bool {
	if len(want) == 0 {
		return !slices.ContainsFunc(got, func(m Monitor) bool { return !m.Automatic })
	}
	if len(got) != len(want) {
		return false
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(g Monitor) bool {
			return g.Name == w.Name && g.Rect() == w.Rect() && g.Primary == w.Primary
		}) {
			return false
		}
	}
	return true
}

var connectedOutput = regexp.MustCompile(`(?m)^(\S+) connected`)

// firstOutput returns the name of the first connected RandR output
// ("screen" on Xvfb).
func (d *Desktop) firstOutput() (string, error) {
	out, err := d.output(10*time.Second, "xrandr", "--query")
	if err != nil {
		return "", err
	}
	m := connectedOutput.FindStringSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("xrandr --query lists no connected output: %q", out)
	}
	return m[1], nil
}

// ParseMonitors parses a monitor list as the withdesktop command takes it:
// comma-separated NAME:WxH+X+Y entries, a trailing '*' marking the primary
// one, e.g. "LEFT:960x1080+0+0*,RIGHT:960x1080+960+0".
func ParseMonitors(s string) ([]Monitor, error) {
	var ms []Monitor
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, geom, ok := strings.Cut(item, ":")
		if !ok || name == "" {
			return nil, fmt.Errorf("monitor %q: want NAME:WxH+X+Y", item)
		}
		m := Monitor{Name: name}
		if strings.HasSuffix(geom, "*") {
			m.Primary = true
			geom = strings.TrimSuffix(geom, "*")
		}
		if _, err := fmt.Sscanf(geom, "%dx%d+%d+%d", &m.Width, &m.Height, &m.X, &m.Y); err != nil {
			return nil, fmt.Errorf("monitor %q: want NAME:WxH+X+Y: %v", item, err)
		}
		ms = append(ms, m)
	}
	return ms, nil
}
