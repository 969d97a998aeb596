//go:build unix

package wayland

import (
	"context"
	"fmt"

	"github.com/deskhand/deskhand/supervisor/cleanup"
	"github.com/deskhand/deskhand/supervisor/desktop/freedesktop"
)

// KeepFlag runs the capture helper as the clipboard keeper, on Wayland as
// on X11: a wlr-data-control source lives only as long as the client that
// made it, so text put back by the helper that serves deskhand (and exits
// with it) would vanish with deskhand. The keeper owns it, in every UTF-8
// text type, until other clients have taken each selection it keeps, as
// wl-copy does (helpers/PROTOCOL.md, "Wayland (wlroots)").
const KeepFlag = freedesktop.KeepFlag

// MaxKeptBytes bounds the text a keeper serves per selection: the most a
// clipboard read returns, so any stashed text can be kept.
const MaxKeptBytes = 16 << 20

// ErrTooLargeToKeep is returned by Keep for text over MaxKeptBytes.
var ErrTooLargeToKeep = fmt.Errorf("clipboard text over %d bytes cannot be kept after deskhand exits", MaxKeptBytes)

// Keep starts a keeper for the clipboard and primary clips of s that have
// Had set, in the Wayland session of env (KEY=value), and returns once it
// owns them. The keeper is the capture helper at helper run with KeepFlag,
// in a session of its own so that it outlives deskhand.
func Keep(ctx context.Context, helper string, env []string, s cleanup.Stash) error {
	if len(s.Clipboard.Text) > MaxKeptBytes || len(s.Primary.Text) > MaxKeptBytes {
		return ErrTooLargeToKeep
	}
	var clipboard, primary *string
	if s.Clipboard.Had {
		clipboard = &s.Clipboard.Text
	}
	if s.Primary.Had {
		primary = &s.Primary.Text
	}
	return freedesktop.StartKeeper(ctx, helper, append(keeperBase(env), HelperEnv(env)...), clipboard, primary, "is the helper older than --keep-clipboard on Wayland?")
}

// keeperBase is what of env the keeper keeps besides the session's
// sockets: its log level and the locale, nothing that names a display.
func keeperBase(env []string) []string {
	var out []string
	for _, k := range []string{"PATH", "HOME", "LANG", "DESKHAND_HELPER_LOG"} {
		if v := getenv(env, k); v != "" {
			out = append(out, k+"="+v)
		}
	}
	return out
}
