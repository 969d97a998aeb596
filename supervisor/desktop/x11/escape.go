//go:build unix

package x11

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// DefaultOwnTimeout is how long a key press deskhand announced with Own
// waits for the X server to report it. The raw event normally arrives
// within milliseconds; one that never arrives (the press failed) must not
// hide a later Escape of the user's for longer than this.
const DefaultOwnTimeout = 5 * time.Second

// WatcherOptions configure Watch.
type WatcherOptions struct {
	// Display is the X display to watch.
	Display string
	// OnEscape is called, on the watcher's goroutine, for each Escape the
	// user presses.
	OnEscape func()
	// OwnTimeout: see DefaultOwnTimeout; 0 means the default.
	OwnTimeout time.Duration
	// Logger receives the records; nil discards them.
	Logger *slog.Logger
}

// Watcher reports the Escape presses of the user, not deskhand's own.
//
// It listens to XInput 2 raw key events on the root window, which name the
// slave device each key came from and are sent once per press (never for
// autorepeat, and also for a press of a key already down). A press from a
// real keyboard device is always the user's. deskhand's own keys come
// through XTEST, but so do the keys of a user on a remote desktop (x11vnc,
// xrdp) or of the user's own tools (xdotool), so XTEST alone does not make
// a press deskhand's. Instead the input package announces each key press it
// is about to send (Own, by keycode), and each raw XTEST press of that
// keycode takes one announcement: a press left over is not deskhand's. So
// every Escape the user presses counts, whatever deskhand sends meanwhile:
// holding Escape itself, pressing it in a loop, or typing without pause.
//
// A private XTEST device for deskhand (a master pair made with XI2) would
// tell the devices apart instead of counting, but keys of a second master
// keyboard go to that master's own focus, which window managers do not
// manage, and XTEST slaves cannot be reattached to the core keyboard.
type Watcher struct {
	onEscape func()
	timeout  time.Duration
	log      *slog.Logger

	mu  sync.Mutex
	own map[uint8][]time.Time // keycode → deadlines of announced presses, oldest first

	stop  func()
	ready chan struct{}
	done  chan struct{}
	once  sync.Once
}

// ErrWatchUnsupported means Escape cannot be watched on this platform.
var ErrWatchUnsupported = errors.New("watching the keyboard for Escape needs X11 on Linux")

// Watch starts a watcher on opts.Display.
func Watch(opts WatcherOptions) (*Watcher, error) {
	w := &Watcher{
		onEscape: opts.OnEscape,
		timeout:  opts.OwnTimeout,
		log:      opts.Logger,
		own:      map[uint8][]time.Time{},
		ready:    make(chan struct{}),
		done:     make(chan struct{}),
	}
	if w.timeout <= 0 {
		w.timeout = DefaultOwnTimeout
	}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	// Xlib waits for the server without a deadline; a stopped X server
	// must not hold up deskhand's start.
	started := make(chan error, 1)
	go func() {
		err := startWatcher(w, opts.Display)
		if err == nil {
			<-w.ready
		}
		started <- err
	}()
	t := time.NewTimer(watchTimeout)
	defer t.Stop()
	select {
	case err := <-started:
		if err != nil {
			return nil, err
		}
		return w, nil
	case <-t.C:
		go func() {
			if err := <-started; err == nil {
				w.Close()
			}
		}()
		return nil, fmt.Errorf("watching for Escape: X display %q did not answer within %s", opts.Display, watchTimeout)
	}
}

// Opening the watcher's X connection, and waiting for its goroutine to
// stop (it closes the connection, which syncs), are bounded: a goroutine
// inside an Xlib call on a server that stopped answering is left behind
// rather than keep deskhand from starting or exiting.
const (
	watchTimeout     = 5 * time.Second
	watchStopTimeout = time.Second
)

// Own announces that deskhand is about to press the key with this keycode
// through XTEST, once. Call it before each press is sent, for every key
// (the keycode of Escape may change while deskhand borrows keycodes); a
// nil Watcher ignores it.
func (w *Watcher) Own(code uint8) {
	if w == nil {
		return
	}
	select {
	case <-w.done:
		return // no raw event will take it
	default:
	}
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pruneLocked(now)
	w.own[code] = append(w.own[code], now.Add(w.timeout))
}

// pruneLocked drops the announcements whose press never showed up.
func (w *Watcher) pruneLocked(now time.Time) {
	for code, ds := range w.own {
		i := 0
		for i < len(ds) && now.After(ds[i]) {
			i++
		}
		if i > 0 {
			w.log.Warn("a key press deskhand sent was never reported by the X server", "keycode", code, "presses", i)
		}
		if i == len(ds) {
			delete(w.own, code)
		} else if i > 0 {
			w.own[code] = ds[i:]
		}
	}
}

// takeOwn uses up one announcement for code, reporting whether there was
// one.
func (w *Watcher) takeOwn(code uint8) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pruneLocked(time.Now())
	ds := w.own[code]
	if len(ds) == 0 {
		return false
	}
	if len(ds) == 1 {
		delete(w.own, code)
	} else {
		w.own[code] = ds[1:]
	}
	return true
}

// press handles one raw key press: from an XTEST device or not, from which
// device, which keycode, and whether that keycode is Escape.
func (w *Watcher) press(fromXTEST bool, source int, code uint8, escape bool) {
	if fromXTEST && w.takeOwn(code) {
		if escape {
			w.log.Debug("Escape from deskhand's own input; ignored", "device", source)
		}
		return
	}
	if !escape {
		return
	}
	w.log.Info("the user pressed Escape", "device", source, "xtest", fromXTEST)
	if w.onEscape != nil {
		w.onEscape()
	}
}

// Close stops the watcher and waits for it, up to watchStopTimeout.
func (w *Watcher) Close() {
	if w == nil {
		return
	}
	w.once.Do(func() {
		if w.stop != nil {
			w.stop()
		}
		t := time.NewTimer(watchStopTimeout)
		defer t.Stop()
		select {
		case <-w.done:
		case <-t.C:
			w.log.Warn("the Escape watcher's X connection does not answer; leaving it behind")
		}
	})
}
