package supervisor

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

// The values of ServeOptions.Teach (serve's --teach).
const (
	TeachAuto = "auto"
	TeachOn   = "on"
	TeachOff  = "off"
)

// TeachModes lists the values of --teach.
var TeachModes = []string{TeachAuto, TeachOn, TeachOff}

// teachSwitch offers the teaching tools on every server attached to it,
// once teaching is known to be available on this display: at once with
// --teach on; with auto, when the helper's handshake announces the
// overlay (bridge.CapabilityTeach); never with off.
type teachSwitch struct {
	mu      sync.Mutex
	decided bool
	on      bool
	waiting []*mcpserver.Server
}

// newTeachSwitch decides mode; with auto it starts the helper (a local
// one: a helper still to be downloaded is asked on its first use, and
// teaching waits for the next start) and reads its capabilities.
func newTeachSwitch(ctx context.Context, mode string, helper *bridge.Client, local bool, logger *slog.Logger) (*teachSwitch, error) {
	t := &teachSwitch{}
	switch mode {
	case TeachOn:
		t.decide(true)
	case TeachOff:
		t.decide(false)
	case TeachAuto, "":
		if !local {
			t.decide(false)
			break
		}
		go func() {
			if err := helper.Start(ctx); err != nil {
				logger.Debug("teaching is off: the capture helper did not start", "err", err)
				t.decide(false)
				return
			}
			on := helper.HandshakeInfo().Has(bridge.CapabilityTeach)
			logger.Debug("teaching tools", "offered", on, "helper_capability", bridge.CapabilityTeach)
			t.decide(on)
		}()
	default:
		return nil, fmt.Errorf("--teach %q: use auto, on or off", mode)
	}
	return t, nil
}

func (t *teachSwitch) decide(on bool) {
	t.mu.Lock()
	t.decided, t.on = true, on
	waiting := t.waiting
	t.waiting = nil
	t.mu.Unlock()
	if on {
		for _, srv := range waiting {
			srv.EnableTeaching()
		}
	}
}

// attach offers srv's teaching tools now or when teaching turns out to be
// available.
func (t *teachSwitch) attach(srv *mcpserver.Server) {
	t.mu.Lock()
	if !t.decided {
		t.waiting = append(t.waiting, srv)
		t.mu.Unlock()
		return
	}
	on := t.on
	t.mu.Unlock()
	if on {
		srv.EnableTeaching()
	}
}
