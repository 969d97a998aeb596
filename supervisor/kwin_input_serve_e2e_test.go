//go:build unix

package supervisor_test

import (
	"strings"
	"testing"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// kwinProbeApp is the app_id KWin gives the probe, for --allow.
func kwinProbeApp(t *testing.T, k *desktoptest.KWin) string {
	t.Helper()
	for _, w := range k.Windows(t) {
		if strings.HasPrefix(w.Caption, "deskhand probe ") {
			return w.AppID
		}
	}
	t.Fatal("KWin lists no probe window")
	return ""
}

// TestKWinServeClickAndType: through serve (run as the session's user, as
// in a Plasma session) and a real MCP client, with every gate live on
// KWin's window list, left_click triggers the approved GTK probe's button,
// and type arrives exactly under KWin's de layout.
func TestKWinServeClickAndType(t *testing.T) {
	t.Run("left_click", func(t *testing.T) {
		bin, helper := userBins(t)
		k := startKWinInput(t, "", helper)
		out := startKWinProbe(t, k, "button")
		app := kwinProbeApp(t, k)
		e := kwinServeAsUser(t, k, bin, helper, "--allow", app+"=full")
		e.access([]string{app})
		e.screenshot("screenshot", nil)
		e.ok("left_click", map[string]any{"coordinate": e.at(kwinScreenW/2, kwinScreenH/2)})
		wlWaitFile(t, out, func(s string) bool { return s == "clicked\n" })
	})
	t.Run("type", func(t *testing.T) {
		bin, helper := userBins(t)
		k := startKWinInput(t, "de", helper)
		out := startKWinProbe(t, k, "entry")
		wlWaitFile(t, out+".focus", func(s string) bool { return s == "focused\n" })
		app := kwinProbeApp(t, k)
		e := kwinServeAsUser(t, k, bin, helper, "--allow", app+"=full")
		e.access([]string{app})
		e.screenshot("screenshot", nil)
		typable := "Grüße, ! yz ~|\\ @€"
		e.ok("type", map[string]any{"text": typable})
		wlWaitFile(t, out, func(s string) bool { return s == typable })
		// What de cannot make is refused with the characters named, and
		// nothing of it typed.
		e.bad("type", map[string]any{"text": "世界"}, "世", "界")
		e.ok("type", map[string]any{"text": "#"})
		if got := wlWaitFile(t, out, func(s string) bool { return strings.HasSuffix(s, "#") }); got != typable+"#" {
			t.Fatalf("after the refusal the entry holds %q, want %q", got, typable+"#")
		}
	})
}
