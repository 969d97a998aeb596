//go:build unix

package x11

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
	"github.com/deskhand/deskhand/supervisor/lock"
	"github.com/jezek/xgb/xproto"
)

// TestLockSelection: two handles on one X server, through two spellings
// of its display, exclude each other; the holder's record names it; the
// holder's connection closing (as its process dies) frees the lock with
// no cleanup; an X client that is not deskhand owning the selection holds
// it too, even taken from under a holder; a stopped X server gives an
// error, not a wait for ever.
func TestLockSelection(t *testing.T) {
	desktoptest.Require(t, "Xvfb")
	d := desktoptest.Start(t, desktoptest.Options{WindowManager: "none"})
	seatA := &seat{display: d.Display()}
	a := lock.OnSeat(seatA, lock.Options{Client: "client a"})
	b := Lock(d.Display()+".0", lock.Options{Client: "client b"})

	if fresh, err := a.Acquire("s1"); !fresh || err != nil {
		t.Fatalf("a.Acquire(s1) = %v, %v; want fresh", fresh, err)
	}
	if fresh, err := a.Acquire("s1"); fresh || err != nil {
		t.Fatalf("a.Acquire(s1) again = %v, %v; want held already", fresh, err)
	}
	var held *lock.HeldError
	if _, err := b.Acquire("s2"); !errors.As(err, &held) || held.Owner.SessionID != "s1" || held.Owner.Client != "client a" {
		t.Fatalf("b.Acquire(s2) while a holds it = %v; want cu_lock_held naming s1 of client a", err)
	}
	if _, err := a.Acquire("s3"); !errors.As(err, &held) || held.Owner.SessionID != "s1" {
		t.Fatalf("a.Acquire(s3) while s1 holds it = %v; want cu_lock_held naming s1", err)
	}
	if o, err := b.Holder(); err != nil || o == nil || o.SessionID != "s1" {
		t.Fatalf("b.Holder() = %+v, %v; want s1", o, err)
	}

	// The connection closes, as when a's process dies: nothing of a's
	// runs, and the X server frees the selection.
	seatA.x.c.Close()
	eventually(t, "b.Acquire(s2) to succeed once a's connection closed", func() bool {
		fresh, err := b.Acquire("s2")
		return err == nil && fresh
	})

	// Another X client takes the selection from under b: b's next action
	// finds it held, by a client that keeps no deskhand record.
	conn, err := connect(context.Background(), d.Display())
	if err != nil {
		t.Fatal(err)
	}
	atom, err := xproto.InternAtom(conn, false, uint16(len(lockSelection)), lockSelection).Reply()
	if err != nil {
		t.Fatal(err)
	}
	win, _ := xproto.NewWindowId(conn)
	root := xproto.Setup(conn).DefaultScreen(conn).Root
	if err := xproto.CreateWindowChecked(conn, 0, win, root, 0, 0, 1, 1, 0, xproto.WindowClassInputOnly, 0, 0, nil).Check(); err != nil {
		t.Fatal(err)
	}
	if err := xproto.SetSelectionOwnerChecked(conn, win, atom.Atom, xproto.TimeCurrentTime).Check(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Acquire("s2"); !errors.As(err, &held) || !strings.Contains(err.Error(), "without a deskhand record") {
		t.Fatalf("b.Acquire(s2) once another X client took the selection = %v; want cu_lock_held", err)
	}
	conn.Close()
	if err := b.Release("s2"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the lock to be free once the other client is gone", func() bool {
		o, err := b.Holder()
		return err == nil && o == nil
	})

	// A stopped X server gets an error, not a wait for ever.
	xvfb, _, _ := d.Pids()
	if err := syscall.Kill(xvfb, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(xvfb, syscall.SIGCONT)
	done := make(chan error, 1)
	go func() {
		_, err := b.Acquire("s5")
		done <- err
	}()
	// Not a timing assertion: this bound only keeps the test from hanging.
	select {
	case err := <-done:
		if err == nil || errors.As(err, &held) {
			t.Fatalf("b.Acquire(s5) on a stopped X server = %v; want an error", err)
		}
		t.Logf("stopped X server: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("b.Acquire on a stopped X server did not return")
	}
}

// eventually polls ok until it holds; the X server frees a selection
// when it reads that its owner's connection closed.
func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10s for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
