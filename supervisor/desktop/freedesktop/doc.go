// Package freedesktop is what freedesktop.org desktops share whatever
// their display server: resolving the app open_application names and
// launching it from its desktop entry, and D-Bus desktop notifications.
// The desktop entries themselves are read by the capture helper (its
// `apps` method), the one place they are parsed, so that the app the
// launch gate approves is the app the helper names the new window after.
package freedesktop
