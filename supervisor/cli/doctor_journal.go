package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor"
	"github.com/deskhand/deskhand/supervisor/cleanup"
	"github.com/deskhand/deskhand/supervisor/geometry"
	"github.com/deskhand/deskhand/supervisor/lock"
)

// journalDir is the directory serve keeps the turn journal in for its
// --state-dir flag, "" when it keeps none.
func journalDir(flag string) (string, error) {
	switch flag {
	case "none":
		return "", nil
	case "":
		return geometry.DefaultStateDir()
	}
	return flag, nil
}

// journalCheck reports the turn journals of display: left by a deskhand
// that is gone (to repair), or kept by one in a turn now.
func journalCheck(dir, display string) check {
	const name = "journal"
	switch {
	case display == "":
		return check{status: "ok", name: name, detail: "no DISPLAY: the private virtual desktops deskhand starts keep no turn journal (they end with it)"}
	case dir == "":
		return check{status: "ok", name: name, detail: "--state-dir none: no turn journal is kept"}
	}
	recs, errs := cleanup.ReadJournals(dir, display)
	if len(errs) > 0 {
		return check{status: "warn", name: name, detail: errors.Join(errs...).Error(), fix: "remove the file(s) named; deskhand never reads them"}
	}
	var dead, live []string
	for _, rec := range recs {
		switch {
		case rec.Dead():
			dead = append(dead, fmt.Sprintf("deskhand pid %d, which is gone, left %s (%s)", rec.Owner.PID, rec.Describe(), rec.Path))
		case !rec.Mine():
			live = append(live, fmt.Sprintf("deskhand pid %d is in a turn with %s; it gives them back when its turn ends", rec.Owner.PID, rec.Describe()))
		}
	}
	if len(dead) > 0 {
		return check{status: "warn", name: name, detail: strings.Join(dead, "; "),
			fix: "run `deskhand doctor --repair` to give them back now (the next `deskhand serve` on " + display + " does it when it starts)"}
	}
	if len(live) > 0 {
		return check{status: "ok", name: name, detail: strings.Join(live, "; ")}
	}
	return check{status: "ok", name: name, detail: "no deskhand left windows hidden or the clipboard stashed on " + display + " (turn journals in " + dir + ")"}
}

// repairJournals is doctor --repair: it gives back what deskhands that
// are gone left on display, through a helper of its own, holding the
// display's computer-use lock so that no live deskhand's turn runs
// meanwhile.
func repairJournals(ctx context.Context, out io.Writer, helperPath, dir, display string) error {
	switch {
	case display == "":
		return errors.New("--repair: DISPLAY is not set; run it with DISPLAY set to the display deskhand served on (the private virtual desktops keep no journal)")
	case dir == "":
		return errors.New("--repair: --state-dir none keeps no turn journal; give --state-dir the directory deskhand serve used")
	}
	recs, errs := cleanup.ReadJournals(dir, display)
	dead := 0
	for _, rec := range recs {
		if rec.Dead() {
			dead++
		}
	}
	if dead == 0 {
		fmt.Fprintf(out, "  repair: nothing to give back on %s\n", display)
		return errors.Join(errs...)
	}
	l := displayLock(display, lock.Options{Display: display, Client: "deskhand doctor --repair"})
	session := "doctor-repair-" + lock.NewSessionID()
	if _, err := l.Acquire(session); err != nil {
		var held *lock.HeldError
		if errors.As(err, &held) {
			return fmt.Errorf("--repair: deskhand pid %d uses %s now, and putting the clipboard back would hand it to its turn; it gives back what the crashed deskhand left when its next turn begins, or stop it and run `deskhand doctor --repair` again", held.Owner.PID, display)
		}
		return fmt.Errorf("--repair: taking the computer-use lock of %s: %w", display, err)
	}
	defer l.Release(session)
	loc, err := supervisor.FindHelper(ctx, supervisor.LocateOptions{Explicit: helperPath, NoDownload: true})
	if err != nil {
		return fmt.Errorf("--repair: finding the capture helper, which shows the windows again and serves the clipboard: %w", err)
	}
	defer loc.Release()
	helper := bridge.New(bridge.Options{Path: loc.Path, Env: []string{"DISPLAY=" + display}, MaxRestarts: 1, ClientName: "deskhand-doctor"})
	defer helper.Close()
	rctx, cancel := context.WithTimeout(ctx, supervisor.RepairTimeout+10*time.Second)
	defer cancel()
	repaired, err := cleanup.RepairLeftovers(rctx, supervisor.RepairOptions(helper, display, nil), dir, display)
	for _, rec := range repaired {
		fmt.Fprintf(out, "  repair: gave back what deskhand pid %d left: %s\n", rec.Owner.PID, rec.Describe())
	}
	if err != nil {
		return fmt.Errorf("--repair: %w", err)
	}
	return nil
}
