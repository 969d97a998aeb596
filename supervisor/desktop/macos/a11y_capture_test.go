package macos

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/consent"
)

// treeExecutor answers A11yTree itself and fails if a capture came with
// the request, which would skip include_apps.
type treeExecutor struct{ nopExecutor }

func (treeExecutor) A11yTree(_ context.Context, req bridge.A11yTreeRequest) (*bridge.A11yTree, error) {
	if req.Capture != nil {
		return nil, os.ErrInvalid
	}
	return &bridge.A11yTree{Window: bridge.A11yWindow{Title: "w"}}, nil
}

// TestTreeCaptureIncludesOnlyApprovedApps: a capture asked for with an
// accessibility tree is taken as every capture is, with include_apps
// listing the approved apps only (here none), not passed on with the tree.
func TestTreeCaptureIncludesOnlyApprovedApps(t *testing.T) {
	log := filepath.Join(t.TempDir(), "captures.jsonl")
	c := fakeClient(t, fakePermsEnv+"=screen_recording,accessibility", fakeLogEnv+"="+log)
	exec := IncludeApprovedApps(treeExecutor{}, c, consent.NewSession())
	tree, err := exec.A11yTree(context.Background(), bridge.A11yTreeRequest{PID: 5, Capture: &bridge.CaptureRequest{Format: bridge.FormatPNG}})
	if err != nil {
		t.Fatal(err)
	}
	if tree.CaptureErr != nil || tree.Capture == nil {
		t.Fatalf("no capture with the tree: %v", tree.CaptureErr)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var sent struct {
		IncludeApps *[]string `json:"include_apps"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(string(data))), &sent); err != nil {
		t.Fatal(err)
	}
	if sent.IncludeApps == nil || len(*sent.IncludeApps) != 0 {
		t.Errorf("the tree's capture sent include_apps %v, want [] (nothing approved)", sent.IncludeApps)
	}
}
