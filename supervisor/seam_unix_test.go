//go:build unix

package supervisor

import (
	"github.com/deskhand/deskhand/supervisor/desktop"
	"github.com/deskhand/deskhand/supervisor/desktop/wayland"
	"github.com/deskhand/deskhand/supervisor/desktop/x11"
)

var (
	_ desktop.Platform = (*x11.Desktop)(nil)
	_ desktop.Platform = (*wayland.Desktop)(nil)
)
