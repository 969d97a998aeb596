// Package desktop is the home of deskhand's desktop platforms: one package
// per platform, each implementing the supervisor's seam (desktopPlatform
// in supervisor/seam.go) for what differs between desktops: choosing the
// display, the display and permission gate, the input backend, the Escape
// watcher, keeping the clipboard after exit, the end-of-turn notification,
// and launching apps.
//
//   - x11: Linux and the other Unix systems on X11 (Xorg, Xvfb); it can
//     start a private virtual desktop (x11/vdisplay).
//   - macos: macOS, through the Swift helper's protocol extensions; it
//     never starts a virtual display.
//   - freedesktop: what freedesktop.org desktops share whatever their
//     display server (desktop entries and app launch, D-Bus
//     notifications), which the x11 and Wayland platforms both use.
//   - wayland: native wlroots Wayland sessions (sway and the like): what the
//     helper's wayland-wlr backend supports there, the gate's verdict,
//     doctor's report, and which desktop --virtual-display means on a
//     Wayland host (PlanDisplay); and GNOME sessions, which the helper's
//     gnome-mutter backend reaches but where serve refuses every action
//     (ErrGNOMENoWindows); the seam itself is supervisor's
//     seam_wayland.go.
//   - sway: the private headless sway that --virtual-display starts on a
//     Wayland host, with its own runtime directory and sockets.
//
// The name is not "platform": supervisor/platform holds platform facts the
// shared safety layer reads as data (system shortcuts, bundle-id rules),
// while these packages talk to a desktop system.
//
// This package has no code.
package desktop
