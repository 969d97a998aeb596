package consent

import (
	"testing"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/catalog"
)

// TestTierFollowsGrants asks for tiers before and after every change to
// the grants and the policy, so that an answer remembered from before a
// change would show.
func TestTierFollowsGrants(t *testing.T) {
	s := NewSession()
	xterm := Grant{AppRef: AppRef{Name: "XTerm", Identity: catalog.IdentityOf(xtermWin)}, Tier: catalog.TierClick}
	zenity := Grant{AppRef: AppRef{Name: "Zenity", Identity: catalog.IdentityOf(zenityWin)}, Tier: catalog.TierFull}
	steps := []struct {
		name   string
		change func()
		want   map[string]catalog.Tier // by app name
	}{
		{"no grants", func() {}, map[string]catalog.Tier{"XTerm": catalog.TierNone, "Zenity": catalog.TierNone}},
		{"xterm granted", func() { s.Add([]Grant{xterm}, Flags{}) }, map[string]catalog.Tier{"XTerm": catalog.TierClick, "Zenity": catalog.TierNone}},
		{"zenity granted", func() { s.Add([]Grant{zenity}, Flags{}) }, map[string]catalog.Tier{"XTerm": catalog.TierClick, "Zenity": catalog.TierFull}},
		{"xterm raised", func() {
			raised := xterm
			raised.Tier = catalog.TierFull
			s.Add([]Grant{raised}, Flags{})
		}, map[string]catalog.Tier{"XTerm": catalog.TierFull, "Zenity": catalog.TierFull}},
		{"policy denies zenity", func() {
			s.setDenied(func(id catalog.Identity) bool { return id.Class == zenityWin.Class })
		}, map[string]catalog.Tier{"XTerm": catalog.TierFull, "Zenity": catalog.TierNone}},
		{"revoked", s.Revoke, map[string]catalog.Tier{"XTerm": catalog.TierNone, "Zenity": catalog.TierNone}},
		{"xterm granted again", func() { s.Add([]Grant{xterm}, Flags{}) }, map[string]catalog.Tier{"XTerm": catalog.TierClick, "Zenity": catalog.TierNone}},
	}
	apps := map[string]bridge.App{"XTerm": xtermWin, "Zenity": zenityWin}
	for _, step := range steps {
		step.change()
		for name, want := range step.want {
			// Twice: the second answer is the remembered one.
			for range 2 {
				if got := s.Tier(apps[name]); got != want {
					t.Errorf("%s: Tier(%s) = %v, want %v", step.name, name, got, want)
				}
			}
		}
	}
}
