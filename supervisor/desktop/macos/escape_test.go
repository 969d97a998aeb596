package macos

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/cleanup"
)

// pressKey has the fake helper's keyboard tap see one key press.
func pressKey(t *testing.T, c *bridge.Client, key map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Call(ctx, "fault.key_down", key, nil); err != nil {
		t.Fatalf("fault.key_down %v: %v", key, err)
	}
}

var userEscape = map[string]any{"key_code": macEscapeKeyCode, "source_pid": 0}

// TestUsersEscapeStopsTheTurn: the helper's escape_pressed notification
// ends the turn the way serve wires it (cleanup's Interrupt): the action
// in flight is cancelled as interrupted, the approvals are withdrawn and
// the user is told.
func TestUsersEscapeStopsTheTurn(t *testing.T) {
	d, err := Open(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	helper := fakeClient(t, fakePermsEnv+"=screen_recording,accessibility")
	d.Launcher(helper)
	revoked := make(chan string, 1)
	ended := make(chan string, 1)
	turns := cleanup.New(cleanup.Options{
		IdleTimeout: -1,
		Revoke:      func(session string) { revoked <- session },
		Notify: func(_ context.Context, _, body string) error {
			ended <- body
			return nil
		},
	})
	defer turns.Close()
	own, stop, err := d.WatchEscape(func() { turns.Interrupt() })
	if err != nil {
		t.Fatalf("WatchEscape: %v", err)
	}
	defer stop()
	if _, err := turns.Begin("model"); err != nil {
		t.Fatal(err)
	}
	action, done := turns.ActionContext(context.Background())
	defer done()

	// deskhand announcing its own Escape must not blind the watch.
	own(macEscapeKeyCode + 8)
	pressKey(t, helper, userEscape)

	select {
	case <-action.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the user's Escape did not stop the action in flight within 30s")
	}
	if cause := context.Cause(action); !errors.Is(cause, cleanup.ErrInterrupted) {
		t.Errorf("the action ended with %v, want %v", cause, cleanup.ErrInterrupted)
	}
	if s := <-revoked; s != "model" {
		t.Errorf("Revoke(%q), want the turn's session %q", s, "model")
	}
	body := <-ended
	if _, active := turns.Active(); active {
		t.Errorf("a turn is still active after the user's Escape (notification %q)", body)
	}
}

// TestOwnEscapesAreIgnored: deskhand's own Escapes (marked, or posted by
// the supervisor) and other keys bring no notification; the user's
// Escapes each bring one, in order. Delivery is in the order the helper
// wrote, so once the last press arrived, everything before it has.
func TestOwnEscapesAreIgnored(t *testing.T) {
	helper := fakeClient(t, fakePermsEnv+"=screen_recording,accessibility")
	var mu sync.Mutex
	var got []int64
	arrived := make(chan struct{}, 16)
	stop, err := helper.Watch(context.Background(), "watch_escape", nil, bridge.NotificationEscapePressed, func(params json.RawMessage) {
		var p struct {
			SourcePID int64 `json:"source_pid"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			t.Errorf("escape_pressed params %s: %v", params, err)
		}
		mu.Lock()
		got = append(got, p.SourcePID)
		mu.Unlock()
		arrived <- struct{}{}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	pressKey(t, helper, map[string]any{"key_code": macEscapeKeyCode, "source_pid": 101, "user_data": macSyntheticMarker})
	pressKey(t, helper, map[string]any{"key_code": macEscapeKeyCode, "from_parent": true})
	pressKey(t, helper, map[string]any{"key_code": 0, "source_pid": 102})
	pressKey(t, helper, map[string]any{"key_code": macEscapeKeyCode, "source_pid": 103})
	pressKey(t, helper, map[string]any{"key_code": macEscapeKeyCode, "source_pid": 104, "user_data": macSyntheticMarker})
	pressKey(t, helper, map[string]any{"key_code": macEscapeKeyCode, "source_pid": 999})
	deadline := time.After(30 * time.Second)
	for {
		mu.Lock()
		last := len(got) > 0 && got[len(got)-1] == 999
		mu.Unlock()
		if last {
			break
		}
		select {
		case <-arrived:
		case <-deadline:
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("the user's last Escape did not arrive within 30s; got %v", got)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []int64{103, 999}; !slices.Equal(got, want) {
		t.Errorf("escape_pressed from the presses of pids %v, want only the user's %v", got, want)
	}
}

// TestEscapeWatchSurvivesAHelperRestart: a restarted helper is not
// watching until watch_escape again, which the bridge sends before any
// other call; the user's Escape then still ends up in onEscape.
func TestEscapeWatchSurvivesAHelperRestart(t *testing.T) {
	helper := fakeClient(t, fakePermsEnv+"=screen_recording,accessibility")
	pressed := make(chan struct{}, 4)
	_, stop, err := WatchEscape(context.Background(), helper, func() { pressed <- struct{}{} })
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	before := helper.PID()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := helper.Call(ctx, "fault.exit", nil, nil); !errors.Is(err, bridge.ErrHelperExited) {
		t.Fatalf("fault.exit = %v, want %v", err, bridge.ErrHelperExited)
	}
	pressKey(t, helper, userEscape)
	if after := helper.PID(); after == before || after == 0 {
		t.Fatalf("helper pid %d before the crash and %d after, want a fresh helper", before, after)
	}
	select {
	case <-pressed:
	case <-time.After(30 * time.Second):
		t.Fatal("after the helper restarted, the user's Escape did not arrive within 30s")
	}
}

// TestRefusedKeyboardTapNamesThePane: without Input Monitoring the watch
// does not start, and the error says which System Settings pane to open.
func TestRefusedKeyboardTapNamesThePane(t *testing.T) {
	d, err := Open(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.WatchEscape(func() {}); err == nil || !strings.Contains(err.Error(), "not set up") {
		t.Errorf("WatchEscape before the helper = %v, want an error saying the helper is not set up", err)
	}
	d.DisplayGate(fakeClient(t, fakePermsEnv+"=screen_recording,accessibility", fakeTapEnv+"=refuse"))
	own, stop, err := d.WatchEscape(func() { t.Error("a refused watch called onEscape") })
	if err == nil {
		stop()
		t.Fatal("WatchEscape with the tap refused = nil error, want a refusal")
	}
	for _, want := range []string{"Input Monitoring is not granted", "System Settings > Privacy & Security > Input Monitoring", InputMonitoringPane, "restart deskhand"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("WatchEscape with the tap refused = %q, want it to contain %q", err, want)
		}
	}
	if own != nil || stop != nil {
		t.Error("a refused WatchEscape returned own or stop")
	}
}
