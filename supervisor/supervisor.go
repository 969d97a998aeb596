// Package supervisor is deskhand's composition root: Serve wires the
// capture helper (package bridge), the input package, the executor, the
// safety layer (the gates, the lock, the turn cleanup and its journal)
// and the MCP layer (package mcpserver) together, over one desktop
// platform (desktop.Platform, which seam_<os>.go picks:
// supervisor/desktop/x11, wayland or macos). It also finds the capture helper
// (FindHelper) and gives back what a killed deskhand left (RepairOptions).
// The command line that drives it is package supervisor/cli.
package supervisor

// Version is the deskhand version, set at build time with
// -ldflags "-X github.com/deskhand/deskhand/supervisor.Version=...".
var Version = "0.1.0-dev"
