package gates

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/catalog"
	"github.com/deskhand/deskhand/supervisor/cleanup"
	"github.com/deskhand/deskhand/supervisor/consent"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

// The clipboard guard keeps the user's clipboard, PRIMARY selection
// (X11's second clipboard: the text selected last, which a middle click
// and, in many apps, shift+Insert paste) and cut buffer (CUT_BUFFER0,
// which xterm fills with every selection and pastes from when PRIMARY
// yields nothing) away from what the grants and tiers do not allow; the
// three are "the selections" below. Key chords and clicks paste and copy without going
// through read_clipboard and write_clipboard, so the guard does not look
// at keys at all; it decides what the selections may hold:
//
//   - off limits (a click-tier app is in play, or the session lacks
//     clipboardRead): the user's text is stashed and the selections are
//     cleared, so nothing pasted can carry it. With a click-tier app
//     they are cleared again after every action, so nothing the model
//     copied or selected reaches it either; without clipboardRead only
//     once, so the model's own copy and paste still work;
//   - kept (off limits, or the session lacks clipboardWrite): the stash
//     is held until the turn ends, which puts the user's text back over
//     anything a copy chord or a selection put there.
//
// One stash per turn: once held it is never replaced, since by then the
// selections hold nothing or the model's text. The turn (cleanup.ClipGuard)
// keeps it, so that every end of a turn (idle, disconnect, Escape, exit)
// puts it back, through a keeper process when deskhand exits.

// 7. Clipboard guard.
func (g *Gates) checkClipboard(ctx context.Context, a *mcpserver.Action) error {
	flags := g.opts.Consent.Flags()
	k := classify(a)
	if k.ReadsClipboard && !flags.ClipboardRead {
		return errors.New("reading the clipboard needs the clipboardRead grant; call request_access with clipboardRead if the task needs it")
	}
	if k.WritesClipboard && !flags.ClipboardWrite {
		return errors.New("writing the clipboard needs the clipboardWrite grant; call request_access with clipboardWrite if the task needs it")
	}
	clickApp, err := g.clickTierInvolved(ctx, a)
	if err != nil {
		return err
	}
	why := "the session has no clipboardRead grant"
	if clickApp != nil {
		why = appName(*clickApp) + " (a click-tier app) is in play"
	}
	offLimits := clickApp != nil || !flags.ClipboardRead
	keep := offLimits || !flags.ClipboardWrite
	// Looking is no reason to touch the user's clipboard; acting is.
	start := clickApp != nil || k.Input
	err = g.opts.Turns.Clipboard(func(cg *cleanup.ClipGuard) error {
		if !cg.Held && keep && start {
			stash, err := g.readSelections(ctx)
			if err != nil {
				return fmt.Errorf("stashing the clipboard before acting: %w", err)
			}
			if err := cg.Hold(stash); err != nil {
				return fmt.Errorf("stashing the clipboard before acting: %w", err)
			}
			g.log.Debug("stashed the selections", "had_clipboard", stash.Clipboard.Had, "had_primary", stash.Primary.Had, "had_cut_buffer", stash.CutBuffer.Had)
		}
		cg.Clearing = cg.Held && clickApp != nil
		switch {
		case cg.Held && offLimits && (!cg.Hidden || cg.Clearing):
			cg.Wrote = true
			if err := g.writeSelections(ctx, nil); err != nil {
				return fmt.Errorf("clearing the clipboard because %s: %w", why, err)
			}
			cg.Hidden = true
		case cg.Held && !offLimits && cg.Hidden:
			// The grants allow the model to see the user's text again.
			cg.Wrote = true
			if err := g.writeSelections(ctx, &cg.Stash); err != nil {
				g.log.Warn("restoring the clipboard", "err", err)
			} else {
				g.log.Debug("restored the selections")
			}
			cg.Hidden = false
		}
		if cg.Held && !keep {
			cg.Held, cg.Stash = false, cleanup.Stash{}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if clickApp != nil && k.WritesClipboard {
		return fmt.Errorf("the clipboard is locked while %s (a click-tier app) is in front or targeted, so that nothing can be pasted into it; "+
			"bring a full-tier app to the front first. %s", appName(*clickApp), consent.AntiSubversionHint)
	}
	return nil
}

// clearAfterAction clears the selections again after an action while a
// click-tier app is in play: a click may have selected or copied
// something. It does nothing once the turn has ended, whose end has put
// the user's text back.
func (g *Gates) clearAfterAction(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	err := g.opts.Turns.Clipboard(func(cg *cleanup.ClipGuard) error {
		if !cg.Clearing {
			return nil
		}
		return g.writeSelections(ctx, nil)
	})
	if errors.Is(err, cleanup.ErrTurnEnded) {
		return nil
	}
	return err
}

// readSelections reads the user's text off every selection the platform
// has.
func (g *Gates) readSelections(ctx context.Context) (cleanup.Stash, error) {
	var s cleanup.Stash
	for _, sel := range cleanup.Selections {
		text, err := g.opts.Desktop.ReadSelection(ctx, sel)
		switch {
		case err == nil:
			*s.Of(sel) = cleanup.Clip{Text: text, Had: true}
		case cleanup.NoText(err), cleanup.Unsupported(err):
		default:
			return s, fmt.Errorf("reading the %s selection: %w", sel, err)
		}
	}
	return s, nil
}

// writeSelections puts the stash's text on every selection the platform
// has; a nil stash clears them.
func (g *Gates) writeSelections(ctx context.Context, s *cleanup.Stash) error {
	// A selection's owner may show what it holds: the screen may change.
	g.screenChanged()
	for _, sel := range cleanup.Selections {
		text := ""
		if s != nil {
			text = s.Of(sel).Text
		}
		err := g.opts.Desktop.WriteSelection(ctx, sel, text)
		if err != nil && !cleanup.Unsupported(err) {
			return fmt.Errorf("writing the %s selection: %w", sel, err)
		}
	}
	return nil
}

// clickTierInvolved returns the click-tier app in front of, or under a
// point of, the action, if there is one.
func (g *Gates) clickTierInvolved(ctx context.Context, a *mcpserver.Action) (*bridge.App, error) {
	list, err := g.windows(ctx, a)
	if err != nil {
		return nil, err
	}
	if f := list.Frontmost; f != nil && g.opts.Consent.Tier(*f) == catalog.TierClick {
		return f, nil
	}
	if a.PID != 0 && classify(a).Input {
		if app, ok := appOfPID(list, a.PID); ok && g.opts.Consent.Tier(app) == catalog.TierClick {
			return &app, nil
		}
	}
	if classify(a).PointTier == catalog.TierNone {
		return nil, nil
	}
	for _, pt := range points(a) {
		at, err := g.windowAt(ctx, a, pt)
		if err != nil {
			return nil, fmt.Errorf("finding the window at (%d, %d): %w", pt.X, pt.Y, err)
		}
		if at.App != nil && g.opts.Consent.Tier(*at.App) == catalog.TierClick {
			return at.App, nil
		}
	}
	return nil, nil
}
