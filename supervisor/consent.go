package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/consent"
	"github.com/deskhand/deskhand/supervisor/desktop/freedesktop"
)

// ConsentOptions are the pre-approvals serve starts with, besides the
// pre-approval file (serve's --allow and --grant).
type ConsentOptions struct {
	// Allow pre-approves apps: APP[=TIER] each.
	Allow []string
	// Grant pre-approves grant flags; an entry may list several,
	// comma-separated.
	Grant []string
}

// newConsent makes the session's consent manager: the pre-approval file
// and flags, the managed policy, and names resolved through the helper's
// window list and the installed desktop entries.
func newConsent(co ConsentOptions, helper *bridge.Client, logger *slog.Logger) (*consent.Manager, error) {
	var grants []string
	for _, g := range co.Grant {
		grants = append(grants, strings.Split(g, ",")...)
	}
	grants = slices.DeleteFunc(grants, func(s string) bool { return strings.TrimSpace(s) == "" })
	m, err := consent.New(consent.Options{Allow: co.Allow, Grant: grants, Apps: appSource{helper}, Logger: logger})
	if err != nil {
		return nil, err
	}
	allow, flags := m.Preapproved()
	if len(allow) > 0 || len(flags.Names()) > 0 {
		logger.Info("pre-approved for request_access", "apps", fmt.Sprint(allow), "flags", strings.Join(flags.Names(), ","), "file", m.PreapprovalPath())
	}
	return m, nil
}

// appSource resolves request_access names against running windows and
// installed desktop entries.
type appSource struct{ helper *bridge.Client }

func (a appSource) RunningApps(ctx context.Context) ([]bridge.App, error) {
	list, err := a.helper.Windows(ctx, true)
	if err != nil {
		return nil, err
	}
	var apps []bridge.App
	for _, w := range list.Windows {
		apps = append(apps, w.App)
	}
	return apps, nil
}

func (a appSource) InstalledApps(ctx context.Context) ([]bridge.App, error) {
	entries, err := freedesktop.LoadEntries(ctx, a.helper)
	if be := (*bridge.Error)(nil); errors.As(err, &be) && be.Code == bridge.CodeUnsupported {
		return nil, nil // macOS: apps are bundles, found running or by name
	}
	if err != nil {
		return nil, err
	}
	var apps []bridge.App
	for _, e := range entries {
		app := bridge.App{Name: e.Name, DesktopID: e.ID, Class: e.StartupWMClass}
		if argv, err := e.Command(); err == nil && len(argv) > 0 {
			app.Exe = filepath.Base(argv[0])
		}
		apps = append(apps, app)
	}
	return apps, nil
}
