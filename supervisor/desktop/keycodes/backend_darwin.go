package keycodes

// On macOS, New posts Quartz events (quartz_darwin.go).
func openBackend(display string) (backend, string, error) { return openQuartz(display) }
