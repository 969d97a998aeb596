package cleanup

import (
	"context"
	"errors"

	"github.com/deskhand/deskhand/bridge"
)

// Clip is one selection's text as the clipboard guard found it.
type Clip struct {
	Text string `json:"text"`
	// Had is false when the selection was empty or held no text (an
	// image, files): then there is no text to put back, only text that
	// appeared since to take away.
	Had bool `json:"had"`
}

// Stash is what the clipboard guard took from the user: the clipboard,
// X11's PRIMARY selection (the text selected last, which a middle click
// pastes) and its cut buffer (where xterm copies every selection, and
// pastes from when PRIMARY yields nothing).
type Stash struct {
	Clipboard Clip `json:"clipboard"`
	Primary   Clip `json:"primary"`
	CutBuffer Clip `json:"cut_buffer"`
}

// Of returns the clip of selection sel.
func (s *Stash) Of(sel bridge.Selection) *Clip {
	switch sel {
	case bridge.SelectionPrimary:
		return &s.Primary
	case bridge.SelectionCutBuffer:
		return &s.CutBuffer
	}
	return &s.Clipboard
}

// Selections are the clipboards a stash covers, in the order they are
// put back.
var Selections = []bridge.Selection{bridge.SelectionClipboard, bridge.SelectionPrimary, bridge.SelectionCutBuffer}

// diesWithOwner reports whether what is written to sel lasts only as long
// as the client that wrote it (a selection, not the cut buffer, which is
// a property of the root window).
func diesWithOwner(sel bridge.Selection) bool {
	return sel != bridge.SelectionCutBuffer
}

// ClipGuard is the clipboard guard's state in one turn. Package gates
// decides what it holds; the turn keeps it, so that it ends with the
// turn and the turn's end puts the stash back.
type ClipGuard struct {
	// Held: Stash holds the user's selections, to be put back when the
	// turn ends. While it is held it is never replaced: by then the
	// selections may be cleared or hold the model's text.
	Held  bool
	Stash Stash
	// Hidden: the guard cleared the user's text off the selections and
	// has not put it back.
	Hidden bool
	// Clearing: a click-tier app is in play, so the selections are
	// cleared after every action.
	Clearing bool
	// Wrote: the guard wrote a selection in this turn (cleared it, or
	// put the user's text back), so the helper may own it and it dies
	// with deskhand unless a keeper takes it over.
	Wrote bool

	// record writes a new stash into the turn journal (see Hold).
	record func(*Stash) error
}

// SelectionStore reads and writes the selections; *bridge.Client
// satisfies it.
type SelectionStore interface {
	ReadSelection(ctx context.Context, sel bridge.Selection) (string, error)
	WriteSelection(ctx context.Context, sel bridge.Selection, text string) error
}

// Clipboard runs f on the current turn's clipboard guard state, under
// the lock that the turn's end takes before it puts the stash back: what
// f does to the selections never lands after that restore. It fails with
// ErrTurnEnded, without calling f, when no turn is current.
func (c *Controller) Clipboard(f func(g *ClipGuard) error) error {
	c.clipMu.Lock()
	defer c.clipMu.Unlock()
	c.mu.Lock()
	t := c.turn
	c.mu.Unlock()
	if t == nil {
		return ErrTurnEnded
	}
	c.journalClip(t)
	err := f(&t.clip)
	c.syncClipJournal(t)
	return err
}

// NoText reports whether err says the selection holds no text (it is
// empty, or holds an image or files).
func NoText(err error) bool {
	var be *bridge.Error
	return errors.As(err, &be) && be.Name == "clipboard_unavailable"
}

// Unsupported reports whether err says the platform has no such
// selection (PRIMARY on macOS).
func Unsupported(err error) bool {
	var be *bridge.Error
	return errors.As(err, &be) && be.Name == "unsupported"
}

// putBack gives the user's selections back at the end of a turn: their
// text where they had text, and no text where they had none (so that
// nothing the model copied without the clipboardWrite grant is left for
// the user to paste). A selection that still holds the user's text is
// left to its owner. When exiting, text deskhand's helper serves is
// handed to a keeper, since the helper's selections die with it.
func (c *Controller) putBack(ctx context.Context, g ClipGuard, exiting bool) error {
	store := c.opts.Selections
	if store == nil {
		return nil
	}
	var errs []error
	keep := Stash{}
	for _, sel := range Selections {
		clip := *g.Stash.Of(sel)
		now, err := store.ReadSelection(ctx, sel)
		switch {
		case Unsupported(err):
			continue
		case err != nil && !NoText(err):
			// Unknown: put it back anyway.
		case clip.Had && err == nil && now == clip.Text && !(exiting && g.Wrote && diesWithOwner(sel)):
			continue // still the user's, with its owner
		case !clip.Had && err != nil:
			continue // no text then, no text now
		}
		if clip.Had && exiting && diesWithOwner(sel) && c.opts.KeepClipboard != nil {
			*keep.Of(sel) = clip
			continue
		}
		text := ""
		if clip.Had {
			text = clip.Text
		}
		if err := store.WriteSelection(ctx, sel, text); err != nil {
			errs = append(errs, err)
		}
	}
	if keep.Clipboard.Had || keep.Primary.Had {
		if err := c.opts.KeepClipboard(ctx, keep); err != nil {
			// Served by the helper, the text at least lasts until
			// deskhand is gone.
			errs = append(errs, err)
			for _, sel := range Selections {
				if clip := keep.Of(sel); clip.Had {
					if err := store.WriteSelection(ctx, sel, clip.Text); err != nil {
						errs = append(errs, err)
					}
				}
			}
		}
	}
	return errors.Join(errs...)
}
