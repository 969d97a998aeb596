package consent

import (
	"context"
	"fmt"
	"strings"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/catalog"
)

// Dialog is the approval form put to the user: a message and a flat JSON
// schema of booleans, one per app and per grant flag (an MCP elicitation
// form).
type Dialog struct {
	Message string
	Schema  map[string]any
}

// Answer is the user's reply to a Dialog.
type Answer struct {
	// Action is "accept", "decline" or "cancel" (MCP elicitation).
	Action string
	// Content holds the form's values when Action is "accept".
	Content map[string]any
}

// Answer actions.
const (
	ActionAccept  = "accept"
	ActionDecline = "decline"
	ActionCancel  = "cancel"
)

// Asker shows a Dialog to the user and returns their answer. The MCP
// layer implements it with elicitation.
type Asker func(ctx context.Context, d *Dialog) (Answer, error)

// TierAllows says what a tier lets the model do.
func TierAllows(t catalog.Tier) string {
	switch t {
	case catalog.TierRead:
		return "visible in screenshots only; no clicks, scrolling or typing"
	case catalog.TierClick:
		return "screenshots, plain left clicks and scrolling; no typing, key presses, right or middle clicks, modifier clicks or dragging"
	case catalog.TierFull:
		return "screenshots, clicks, dragging, typing and key presses"
	}
	return "nothing: it is hidden or masked in screenshots"
}

// AntiSubversionHint ends every refusal for tier reasons.
const AntiSubversionHint = "Do not try to get around this restriction by other means: not through scripts, a shell or terminal, another app, " +
	"keyboard shortcuts, the clipboard, or another tool. If the task needs more access, stop and tell the user what you need and why."

// TierRefusal is the message for an action an app's tier does not allow:
// need is the tier the action requires, have the app's tier (TierNone for
// an app that is not approved), action what was refused ("typing",
// "a right click"). It ends with AntiSubversionHint.
func TierRefusal(app bridge.App, have, need catalog.Tier, action string) string {
	entry := catalog.Classify(catalog.IdentityOf(app))
	name := DisplayName(firstNonEmpty(entry.Name, app.Name, app.Class, app.Instance, app.BundleID, "this app"))
	var b strings.Builder
	if have == catalog.TierNone {
		fmt.Fprintf(&b, "%s is not approved for this session, so %s there is refused. Call request_access for it first if the task needs it. ", name, action)
	} else {
		fmt.Fprintf(&b, "%s is approved at the %s tier (%s), and %s needs the %s tier. ", name, have, TierAllows(have), action, need)
		switch entry.Category {
		case "browser":
			b.WriteString("Browsers are read-only for deskhand; use a browser automation tool for web pages. ")
		case "terminal", "ide":
			b.WriteString("Terminals and IDEs take clicks only, so no command can be typed into them; run commands with your own shell tool instead, if you have one and the user allows it. ")
		case "trading":
			b.WriteString("Trading, banking and wallet apps are read-only for deskhand. ")
		}
	}
	b.WriteString(AntiSubversionHint)
	return b.String()
}

// sensitiveWarning is the dialog's warning for a sensitivity label.
func sensitiveWarning(label string) string {
	switch label {
	case catalog.SensitiveShell:
		return "Warning: this is a shell. Whatever reaches it can run any command as you."
	case catalog.SensitiveFileManager:
		return "Warning: this is a file manager. It can open, move, share and delete your files."
	case catalog.SensitiveSystemSettings:
		return "Warning: this changes your system: accounts, passwords, network, security or installed software."
	}
	return ""
}

func categoryNote(category string) string {
	switch category {
	case "browser":
		return "Browsers are limited to reading."
	case "terminal", "ide":
		return "Terminals and IDEs are limited to clicks, so nothing can be typed into them."
	case "trading":
		return "Trading, banking and crypto-wallet apps are limited to reading."
	}
	return ""
}

// dialogItem is one checkbox of the dialog.
type dialogItem struct {
	key  string
	app  *candidate
	flag string
}

func appKey(i int) string     { return fmt.Sprintf("app%02d", i+1) }
func flagKey(f string) string { return "flag_" + f }

// buildDialog makes the approval form for apps and flags.
func buildDialog(reason string, apps []candidate, flags []string) (*Dialog, []dialogItem) {
	var b strings.Builder
	b.WriteString("An AI agent using deskhand asks to operate these applications on your desktop for the rest of this session")
	// %q escapes the model's line breaks, bidi overrides and other
	// invisible characters, so the reason stays one quoted line.
	if reason = strings.TrimSpace(reason); reason != "" {
		fmt.Fprintf(&b, ", because: %q", reason)
	}
	b.WriteString(".\n")
	props := map[string]any{}
	var items []dialogItem
	for i := range apps {
		c := &apps[i]
		key := appKey(i)
		tier := c.entry.DefaultTier
		title := fmt.Sprintf("%s (%s: %s)", c.ref.Name, tier, TierAllows(tier))
		var desc []string
		if note := categoryNote(c.entry.Category); note != "" {
			desc = append(desc, note)
		}
		if w := sensitiveWarning(c.entry.Sensitive); w != "" {
			desc = append(desc, w)
		}
		switch program := DisplayName(firstNonEmpty(c.ref.Identity.Path, c.ref.Identity.Exe)); {
		case c.entry.Family != "":
			desc = append(desc, fmt.Sprintf("Its program, %s, is part of %s (%s), so it is approved and limited as %s.", program, c.entry.Name, DisplayName(c.entry.Family), c.entry.Name))
		case c.entry.Name == "" && !c.ref.Literal && program != "":
			desc = append(desc, fmt.Sprintf("Unknown app: no catalog entry and no package or bundle deskhand knows covers its program, %s.", program))
		case c.entry.Name == "" && !c.ref.Literal:
			desc = append(desc, "Unknown app: deskhand does not know it or its program.")
		}
		if c.ref.Literal {
			desc = append(desc, fmt.Sprintf("No running or installed app is called \"%s\"; this covers any window whose class or program is named so.", c.ref.Name))
		}
		fmt.Fprintf(&b, "\n- %s", title)
		if len(desc) > 0 {
			fmt.Fprintf(&b, " %s", strings.Join(desc, " "))
		}
		props[key] = map[string]any{"type": "boolean", "title": "Allow " + title, "description": strings.Join(desc, " "), "default": true}
		items = append(items, dialogItem{key: key, app: c})
	}
	if len(flags) > 0 {
		b.WriteString("\n\nIt also asks to:")
		for _, f := range flags {
			key := flagKey(f)
			fmt.Fprintf(&b, "\n- %s (%s)", flagMeaning[f], f)
			props[key] = map[string]any{"type": "boolean", "title": "Let it " + flagMeaning[f], "description": f, "default": true}
			items = append(items, dialogItem{key: key, flag: f})
		}
	}
	b.WriteString("\n\nUntick what you do not want. Apps you untick, or all of them if you decline, are remembered as declined: " +
		"deskhand will refuse them without asking until you run `deskhand grants forget APP`. " +
		"Approvals end when this deskhand session ends. Windows of apps you do not approve are hidden or blacked out in screenshots.")
	return &Dialog{Message: b.String(), Schema: map[string]any{"type": "object", "properties": props}}, items
}

// applyAnswer records the user's answer to p in p.out.
func (m *Manager) applyAnswer(p *Pending, ans Answer) error {
	out, items, now := p.out, p.items, p.now
	out.Asked = true
	out.Answer = ans.Action
	var declined []AppRef
	for _, it := range items {
		var kind, why string
		switch ans.Action {
		case ActionAccept:
			v, ok := ans.Content[it.key].(bool)
			switch {
			case ok && v:
				if it.app != nil {
					out.Granted = append(out.Granted, m.grant(*it.app, catalog.TierNone, SourceUser, now))
				} else {
					out.FlagsGranted = append(out.FlagsGranted, it.flag)
				}
				continue
			case ok:
				kind, why = RefusedDeclined, "the user declined %s in the approval dialog"
			default:
				kind, why = RefusedUnanswered, "the approval dialog came back without a choice for %s; it was not approved"
			}
		case ActionDecline:
			kind, why = RefusedDeclined, "the user declined the request for %s"
		case ActionCancel:
			kind, why = RefusedCancelled, "the user dismissed the approval dialog without deciding on %s"
		default:
			return fmt.Errorf("asking the user for access: unknown answer %q", ans.Action)
		}
		if it.app != nil {
			w := fmt.Sprintf(why, it.app.ref.Name)
			if kind == RefusedDeclined {
				declined = append(declined, it.app.ref)
				w += fmt.Sprintf("; do not ask for it again. It stays refused until the user runs `deskhand grants forget %s`", shellWord(it.app.ref.Name))
			}
			out.Refused = append(out.Refused, Refusal{Requested: DisplayName(it.app.query), Name: it.app.ref.Name, Kind: kind, Why: w})
		} else {
			out.FlagsRefused = append(out.FlagsRefused, Refusal{Requested: it.flag, Kind: kind, Why: fmt.Sprintf(why, it.flag)})
		}
	}
	if err := m.denials.Add(declined, p.reason, now); err != nil {
		m.log.Warn("remembering declined apps", "err", err)
		return fmt.Errorf("the user declined %d app(s), but deskhand could not remember it: %w", len(declined), err)
	}
	return nil
}

// Text is the request_access result for the model.
func (o *Outcome) Text() string {
	var b strings.Builder
	line := func(format string, args ...any) {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, format, args...)
	}
	for _, g := range o.allGrants() {
		line("Granted: %s at the %s tier (%s).", g.Name, g.Tier, TierAllows(g.Tier))
		if w := sensitiveWarning(g.Entry().Sensitive); w != "" {
			b.WriteString(" " + w)
		}
	}
	for _, r := range o.Refused {
		line("Not granted: %s: %s.", r.Requested, r.Why)
	}
	for _, f := range o.FlagsGranted {
		line("Granted flag %s: %s.", f, flagEffect[f])
	}
	for _, r := range o.FlagsRefused {
		line("Not granted: flag %s: %s.", r.Requested, r.Why)
	}
	if o.HowToPreapprove != "" {
		line("%s Tell the user exactly this; do not try to approve apps yourself.", o.HowToPreapprove)
	}
	limited := false
	for _, g := range o.allGrants() {
		if g.Tier < catalog.TierFull {
			limited = true
		}
	}
	if limited {
		line("Apps below the full tier refuse the actions their tier does not allow. %s", AntiSubversionHint)
	}
	if len(o.Granted)+len(o.AlreadyGranted) > 0 {
		line("Windows of apps that are not approved are hidden or masked in screenshots. Take a screenshot to begin.")
	} else if len(o.FlagsGranted) == 0 {
		line("No app is approved, so every other tool is refused.")
	}
	return b.String()
}

func (o *Outcome) allGrants() []Grant {
	return append(append([]Grant(nil), o.Granted...), o.AlreadyGranted...)
}
