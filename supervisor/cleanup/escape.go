package cleanup

import (
	"errors"
	"log/slog"
	"sync"
	"time"
)

// DefaultSyntheticGrace is how long after deskhand's own Escape key ends an
// Escape from the XTEST device still counts as deskhand's: the X server
// reports the raw event to the watcher's connection a little after the
// input connection has sent it.
const DefaultSyntheticGrace = 500 * time.Millisecond

// WatcherOptions configure Watch.
type WatcherOptions struct {
	// Display is the X display to watch.
	Display string
	// OnEscape is called, on the watcher's goroutine, for each Escape the
	// user presses.
	OnEscape func()
	// SyntheticGrace: see DefaultSyntheticGrace; 0 means the default.
	SyntheticGrace time.Duration
	// Logger receives the records; nil discards them.
	Logger *slog.Logger
}

// Watcher reports the Escape presses of the user, not deskhand's own.
//
// It listens to XInput 2 raw key events on the root window, which name the
// slave device each key came from. A press from a real keyboard device is
// always the user's. deskhand's own keys come through XTEST, but so do the
// keys of a user on a remote desktop (x11vnc, xrdp) or of the user's own
// tools (xdotool), so XTEST alone does not make a press deskhand's: an
// Escape from an XTEST device counts as deskhand's only while deskhand is
// itself sending an Escape (between Synthetic and the function it returns,
// plus a short grace period).
type Watcher struct {
	onEscape func()
	grace    time.Duration
	log      *slog.Logger

	mu     sync.Mutex
	active int       // deskhand's Escape injections in progress
	until  time.Time // end of the grace period of the last one

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
		grace:    opts.SyntheticGrace,
		log:      opts.Logger,
		ready:    make(chan struct{}),
		done:     make(chan struct{}),
	}
	if w.grace <= 0 {
		w.grace = DefaultSyntheticGrace
	}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	if err := startWatcher(w, opts.Display); err != nil {
		return nil, err
	}
	<-w.ready
	return w, nil
}

// Synthetic marks the start of an Escape that deskhand itself sends; call
// the returned function when it has been sent.
func (w *Watcher) Synthetic() func() {
	if w == nil {
		return func() {}
	}
	w.mu.Lock()
	w.active++
	w.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			w.mu.Lock()
			w.active--
			if u := time.Now().Add(w.grace); u.After(w.until) {
				w.until = u
			}
			w.mu.Unlock()
		})
	}
}

func (w *Watcher) escape(fromXTEST bool, source int) {
	if fromXTEST {
		w.mu.Lock()
		ours := w.active > 0 || time.Now().Before(w.until)
		w.mu.Unlock()
		if ours {
			w.log.Debug("Escape from deskhand's own input; ignored", "device", source)
			return
		}
	}
	w.log.Info("the user pressed Escape", "device", source, "xtest", fromXTEST)
	if w.onEscape != nil {
		w.onEscape()
	}
}

// Close stops the watcher and waits for it.
func (w *Watcher) Close() {
	if w == nil {
		return
	}
	w.once.Do(func() {
		if w.stop != nil {
			w.stop()
		}
		<-w.done
	})
}
