//go:build !linux || !cgo

package cleanup

func startWatcher(w *Watcher, display string) error { return ErrWatchUnsupported }
