//go:build unix

package x11

import (
	"context"
	"fmt"
	"os"

	"github.com/deskhand/deskhand/supervisor/cleanup"
	"github.com/deskhand/deskhand/supervisor/desktop/freedesktop"
)

// KeepFlag runs the capture helper as the clipboard keeper. An X
// selection lives only as long as the client that owns it, so text put
// back by the helper that serves deskhand (and exits with it) would
// vanish at once. deskhand instead runs the helper binary once more with
// this flag, in a session of its own: it owns the text (in UTF-8 and
// Latin-1, large text through INCR, as clipboard_write does) until other
// clients have taken every selection it keeps, as xclip does. The helper
// is the only X selection owner deskhand has (helpers/PROTOCOL.md, "The
// clipboard keeper").
const KeepFlag = freedesktop.KeepFlag

// MaxKeptBytes bounds the text a keeper serves per selection: the
// helper's limit on a clipboard_write.
const MaxKeptBytes = 1 << 20

// ErrTooLargeToKeep is returned by Keep for text over MaxKeptBytes.
var ErrTooLargeToKeep = fmt.Errorf("clipboard text over %d bytes cannot be kept after deskhand exits", MaxKeptBytes)

// Keep starts a keeper for the clipboard and PRIMARY clips of s that have
// Had set (the cut buffer needs none: it outlives its writer), on X
// display display, and returns once it owns their selections. The keeper
// is the capture helper at helper run with KeepFlag.
func Keep(ctx context.Context, helper, display string, s cleanup.Stash) error {
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
	return freedesktop.StartKeeper(ctx, helper, append(os.Environ(), "DISPLAY="+display), clipboard, primary, "is the helper older than --keep-clipboard?")
}
