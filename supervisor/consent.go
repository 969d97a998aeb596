package supervisor

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/consent"
	"github.com/deskhand/deskhand/supervisor/desktop"
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
// window list and the platform's installed apps.
func newConsent(co ConsentOptions, helper *bridge.Client, plat desktop.Platform, logger *slog.Logger) (*consent.Manager, error) {
	var grants []string
	for _, g := range co.Grant {
		grants = append(grants, strings.Split(g, ",")...)
	}
	grants = slices.DeleteFunc(grants, func(s string) bool { return strings.TrimSpace(s) == "" })
	m, err := consent.New(consent.Options{Allow: co.Allow, Grant: grants, Apps: appSource{helper, plat}, Logger: logger})
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
// the platform's installed apps.
type appSource struct {
	helper *bridge.Client
	plat   desktop.Platform
}

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
	return a.plat.InstalledApps(ctx, a.helper)
}
