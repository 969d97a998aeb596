//go:build unix && !linux

package x11

import (
	"context"
	"errors"

	"github.com/deskhand/deskhand/supervisor/geometry"
)

// xping is XCB's round trip on Linux (ping_linux.go); elsewhere the
// display gate pings over the probe's xgb connection.
type xping struct{}

func openPing(context.Context, string) (*xping, error) {
	return nil, errors.New("the XCB ping is built on Linux only")
}

func (*xping) ping(context.Context, *uint32) error { return errors.New("no XCB ping here") }

func (*xping) followsDrawing() bool { return false }

func (*xping) drain(bool, func(geometry.Rect, uint32)) bool { return false }

func (*xping) stopFollowing() {}

func (*xping) close() {}
