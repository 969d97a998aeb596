package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/deskhand/deskhand/supervisor/catalog"
	"github.com/deskhand/deskhand/supervisor/consent"
)

const grantsUsage = `grants <list|forget|allow|disallow> [flags] [apps]

Shows and changes what deskhand may use outside a session: the apps and
grant flags pre-approved for clients that cannot show deskhand's approval
dialog, the apps the user declined (request_access refuses them without
asking until they are forgotten), and the managed policy in force.

  deskhand grants list
  deskhand grants forget firefox          ask about Firefox again next time
  deskhand grants forget --all
  deskhand grants allow xterm zenity=full --grant clipboardRead
  deskhand grants disallow zenity --grant clipboardRead

An app is a name or id: "firefox", "org.gnome.Calculator", "xterm",
"com.apple.Safari"; APP=TIER picks its tier (read, click or full). Grant
flags: clipboardRead, clipboardWrite, systemKeyCombos. Pre-approvals take
effect when the MCP server next starts. Grants made in the approval dialog
last for one server session and are not listed here.

Flags:`

func runGrantsCommand(_ context.Context, args []string, stdio Stdio) error {
	fs := newFlagSet("grants", grantsUsage, stdio)
	configDir := fs.String("config-dir", "", "`directory` of the pre-approval file and the remembered denials (default $XDG_CONFIG_HOME/deskhand, else ~/.config/deskhand)")
	all := fs.Bool("all", false, "forget: forget every remembered denial")
	var grant stringList
	fs.Var(&grant, "grant", "allow/disallow: grant `flag`s (clipboardRead, clipboardWrite, systemKeyCombos), repeatable or comma-separated")
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		fmt.Fprintln(stdio.Err, "deskhand grants: name a subcommand: list, forget, allow or disallow")
		fs.Usage()
		return errUsage
	}
	dir := *configDir
	if dir == "" {
		if dir, err = consent.DefaultConfigDir(); err != nil {
			return err
		}
	}
	sub, apps := rest[0], rest[1:]
	var flags []string
	for _, g := range grant {
		for _, f := range strings.Split(g, ",") {
			if strings.TrimSpace(f) == "" {
				continue
			}
			name, err := consent.ParseFlag(f)
			if err != nil {
				return err
			}
			flags = append(flags, name)
		}
	}
	prePath := filepath.Join(dir, consent.PreapprovalFile)
	denials := consent.NewDenials(filepath.Join(dir, consent.DenialsFile))
	switch sub {
	case "list":
		if len(apps) > 0 || len(flags) > 0 || *all {
			return fmt.Errorf("list takes no arguments")
		}
		return listGrants(stdio, prePath, denials)
	case "forget":
		if len(flags) > 0 {
			return fmt.Errorf("forget takes apps, not --grant: grant flags are never remembered as declined")
		}
		if len(apps) == 0 && !*all {
			return fmt.Errorf("forget needs the apps to forget, or --all; `deskhand grants list` shows them")
		}
		return forgetDenials(stdio, denials, apps, *all)
	case "allow", "disallow":
		if *all {
			return fmt.Errorf("--all only goes with forget")
		}
		if len(apps) == 0 && len(flags) == 0 {
			return fmt.Errorf("%s needs apps (APP or APP=TIER) or --grant flags", sub)
		}
		return editPreapproval(stdio, prePath, sub == "allow", apps, flags)
	}
	fmt.Fprintf(stdio.Err, "deskhand grants: unknown subcommand %q: use list, forget, allow or disallow\n", sub)
	fs.Usage()
	return errUsage
}

func listGrants(stdio Stdio, prePath string, denials *consent.Denials) error {
	w := stdio.Out
	pre, err := consent.LoadPreapproval(prePath)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Pre-approved (%s):\n", prePath)
	if len(pre.Allow)+len(pre.Grant) == 0 {
		fmt.Fprintln(w, "  nothing")
	}
	for _, a := range pre.Allow {
		spec, _ := consent.ParseAllow(a)
		fmt.Fprintf(w, "  %-28s %s\n", spec.String(), describeAllow(spec))
	}
	if len(pre.Grant) > 0 {
		fmt.Fprintf(w, "  flags: %s\n", strings.Join(pre.Grant, ", "))
	}

	list, err := denials.List()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nDeclined, refused without asking until forgotten (%s):\n", denials.Path())
	if len(list) == 0 {
		fmt.Fprintln(w, "  nothing")
	}
	for _, d := range list {
		fmt.Fprintf(w, "  %-28s declined %s", consent.DisplayName(d.Name), d.DeniedAt.Local().Format("2006-01-02 15:04"))
		if d.Reason != "" {
			fmt.Fprintf(w, " (asked for: %q)", d.Reason)
		}
		fmt.Fprintln(w)
	}

	policy, err := consent.LoadPolicy(consent.PolicyPaths())
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nManaged policy (%s):\n", strings.Join(consent.PolicyPaths(), ", "))
	if len(policy.Sources) == 0 {
		fmt.Fprintln(w, "  none")
	} else {
		if len(policy.Deny) > 0 {
			fmt.Fprintf(w, "  denies apps: %s\n", strings.Join(policy.Deny, ", "))
		}
		if len(policy.DenyFlags) > 0 {
			fmt.Fprintf(w, "  denies flags: %s\n", strings.Join(policy.DenyFlags, ", "))
		}
		if policy.CatalogTiersOnly {
			fmt.Fprintln(w, "  keeps apps at their catalog tiers")
		}
	}
	fmt.Fprintln(w, "\nAlways denied by the catalog: media and reading apps (Netflix, Spotify, Kindle, ...).")
	return nil
}

// describeAllow says what a pre-approval grants.
func describeAllow(a consent.Allow) string {
	e, _, known := catalog.Find(a.App)
	switch {
	case known && e.PolicyDenied:
		return fmt.Sprintf("%s: a %s app, always denied", e.Name, e.Category)
	case known && a.Tier == catalog.TierNone:
		return fmt.Sprintf("%s at its catalog tier, %s", e.Name, e.DefaultTier)
	case known && a.Tier > e.DefaultTier:
		return fmt.Sprintf("%s at %s, above its catalog tier %s", e.Name, a.Tier, e.DefaultTier)
	case known:
		return fmt.Sprintf("%s at %s", e.Name, a.Tier)
	case a.Tier == catalog.TierNone:
		return "full tier (not in the catalog)"
	}
	return a.Tier.String() + " tier"
}

func forgetDenials(stdio Stdio, denials *consent.Denials, apps []string, all bool) error {
	var removed []consent.Denial
	if all {
		r, err := denials.Forget("", true)
		if err != nil {
			return err
		}
		removed = r
	}
	for _, app := range apps {
		r, err := denials.Forget(app, false)
		if err != nil {
			return err
		}
		if len(r) == 0 {
			fmt.Fprintf(stdio.Err, "deskhand grants: %q is not among the declined apps; `deskhand grants list` shows them\n", app)
		}
		removed = append(removed, r...)
	}
	for _, d := range removed {
		fmt.Fprintf(stdio.Out, "forgot: %s (request_access will ask about it again)\n", consent.DisplayName(d.Name))
	}
	if len(removed) == 0 && len(apps) > 0 {
		return fmt.Errorf("nothing forgotten")
	}
	return nil
}

func editPreapproval(stdio Stdio, path string, allow bool, apps, flags []string) error {
	pre, err := consent.LoadPreapproval(path)
	if err != nil {
		return err
	}
	sameApp := func(a, b string) bool {
		x, _ := consent.ParseAllow(a)
		y, _ := consent.ParseAllow(b)
		if strings.EqualFold(x.App, y.App) {
			return true
		}
		ex, _, okx := catalog.Find(x.App)
		ey, _, oky := catalog.Find(y.App)
		return okx && oky && ex.Name == ey.Name
	}
	for _, s := range apps {
		spec, err := consent.ParseAllow(s)
		if err != nil {
			return err
		}
		if allow {
			if e, _, ok := catalog.Find(spec.App); ok && e.PolicyDenied {
				return fmt.Errorf("%s is a %s app; deskhand never operates media and reading apps", e.Name, e.Category)
			}
		}
		pre.Allow = slices.DeleteFunc(pre.Allow, func(old string) bool { return sameApp(old, spec.App) })
		if allow {
			pre.Allow = append(pre.Allow, spec.String())
			fmt.Fprintf(stdio.Out, "pre-approved: %s (%s)\n", spec, describeAllow(spec))
		} else {
			fmt.Fprintf(stdio.Out, "no longer pre-approved: %s\n", spec.App)
		}
	}
	for _, f := range flags {
		pre.Grant = slices.DeleteFunc(pre.Grant, func(old string) bool { n, _ := consent.ParseFlag(old); return n == f })
		if allow {
			pre.Grant = append(pre.Grant, f)
			fmt.Fprintf(stdio.Out, "pre-granted flag: %s\n", f)
		} else {
			fmt.Fprintf(stdio.Out, "flag no longer pre-granted: %s\n", f)
		}
	}
	if err := consent.SavePreapproval(path, pre); err != nil {
		return err
	}
	fmt.Fprintf(stdio.Out, "wrote %s; restart the MCP server for it to take effect\n", path)
	return nil
}

// parseInterspersed parses flags anywhere among the arguments and returns
// the others in order.
func parseInterspersed(fs *flagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return rest, nil
		}
		if args[0] == "--" {
			return append(rest, args[1:]...), nil
		}
		rest = append(rest, args[0])
		args = args[1:]
	}
}

type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }
