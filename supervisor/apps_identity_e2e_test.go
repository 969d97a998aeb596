//go:build unix

package supervisor_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/internal/desktoptest"
)

// TestAppIdentityOneSource: the app open_application resolves and
// launches, and the identity the helper gives the window that appears,
// come from one reading of the desktop entries, whatever tricky entries
// the data directories hold. Before, the supervisor and the helper each
// parsed the files, and disagreed: here a higher-priority entry whose
// TryExec program is missing (so it is not installed, and the launcher
// skipped it) claims the same StartupWMClass, and the helper named the
// launched window after it. The launched entry's id comes from a
// subdirectory (kde4/tricky-term.desktop is kde4-tricky-term), its Exec
// needs the specification's quoting and escapes, and
// its StartupWMClass differs in case from the window's class.
func TestAppIdentityOneSource(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	home := filepath.Join(d.Dir(), "data", "applications")
	write := func(rel, content string) {
		t.Helper()
		path := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("aaa-ghost.desktop", "[Desktop Entry]\nType=Application\nName=Ghost Term\n"+
		"Exec=xterm\nTryExec=/nonexistent/deskhand-ghost\nStartupWMClass=TrickyTerm\n")
	write("kde4/tricky-term.desktop", "[Desktop Entry]\nType=Application\nName=Tricky Term\nName[de]=Knifflig\n"+
		`Exec="xterm" -class TrickyTerm -T "tricky\sone \"quoted\"" %U`+"\n"+
		"StartupWMClass=trickyterm\n")
	write("zz-hidden.desktop", "[Desktop Entry]\nType=Application\nName=Tricky Term\nExec=xterm\nHidden=true\n")
	e := serve(t, d)
	res := e.ok("open_application", map[string]any{"app": "Tricky Term"})
	data, _ := res.StructuredContent.(map[string]any)
	win, _ := data["window"].(map[string]any)
	if data["desktop_id"] != "kde4-tricky-term" {
		t.Errorf("open_application launched %v, want kde4-tricky-term", data["desktop_id"])
	}
	// The identity the gates and consent see: the helper's window list,
	// read as deskhand reads it, in the same environment.
	id, _ := win["id"].(float64)
	helper := bridge.New(bridge.Options{Path: desktoptest.HelperPath(t), Env: d.AppEnv()})
	defer helper.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := helper.Windows(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	var app *bridge.App
	for i := range list.Windows {
		if list.Windows[i].ID == uint32(id) {
			app = &list.Windows[i].App
		}
	}
	if app == nil || app.DesktopID != data["desktop_id"] || app.Name != "Tricky Term" {
		t.Errorf("the launched window %#x has the identity %+v, but open_application launched %v", uint32(id), app, data["desktop_id"])
	}
	if win["title"] != `tricky one "quoted"` {
		t.Errorf("the launched window's title is %q: the Exec quoting was not undone", win["title"])
	}
	if id, ok := win["id"].(float64); ok {
		if info := d.WindowInfo(t, uint32(id)); !info.Viewable {
			t.Errorf("the reported window %#x: %+v", uint32(id), info)
		}
	}
	// The entry whose TryExec is missing is not installed, for either.
	e.bad("open_application", map[string]any{"app": "Ghost Term"}, "no installed application")
}
