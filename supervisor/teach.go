package supervisor

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

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

// teachProbeTimeout bounds the wait for the helper's handshake that
// decides --teach auto.
const teachProbeTimeout = 10 * time.Second

// newTeachSwitch decides mode; with auto it starts the helper (a local
// one: a helper still to be downloaded is not fetched for this, and
// teaching stays off) and reads its capabilities.
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
		// Decided before serving, so that tools/list is the same from
		// the first call on; the helper starts now anyway.
		sctx, cancel := context.WithTimeout(ctx, teachProbeTimeout)
		err := helper.Start(sctx)
		cancel()
		if err != nil {
			logger.Info("teaching tools are off: the capture helper did not start", "err", err)
			t.decide(false)
			break
		}
		on := helper.HandshakeInfo().Has(bridge.CapabilityTeach)
		logger.Debug("teaching tools", "offered", on, "helper_capability", bridge.CapabilityTeach)
		t.decide(on)
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
