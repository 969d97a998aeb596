//go:build unix && (!linux || !cgo)

package x11

func startWatcher(w *Watcher, display string) error { return ErrWatchUnsupported }
