//go:build unix

// Withdesktop starts a private X desktop (Xvfb plus a window manager, and
// optionally test applications), runs a command inside it, tears the desktop
// down and exits with the command's status. It lets Rust tests and scripts
// use the same harness as the Go tests (package desktoptest).
//
// Usage:
//
//	go run ./internal/desktoptest/withdesktop [flags] -- command [args...]
//
// Flags:
//
//	-size WxH        screen size (default 1920x1080)
//	-depth N         colour depth (default 24)
//	-wm NAME         window manager: openbox (default), none, or a program
//	-apps LIST       comma-separated apps to start first: xterm, gtk,
//	                 gtk3-widget-factory, gtk4-widget-factory
//	-a11y            start a private session bus and AT-SPI (at-spi-bus-launcher
//	                 and the registry) before the apps, with accessibility on
//	-monitors LIST   RandR monitors, e.g. LEFT:960x1080+0+0*,RIGHT:960x1080+960+0
//	                 ('*' marks the primary one)
//
// The command runs with DISPLAY set to the new display, DESKHAND_DESKTOP_ID
// set to the desktop's id, and DESKHAND_WINDOW_XTERM / DESKHAND_WINDOW_GTK
// set to the decimal X window ids of the started apps (DESKHAND_WINDOW_GTK3_WIDGET_FACTORY
// and so on for the others) and DESKHAND_PID_<APP> to their pids. With -a11y
// DBUS_SESSION_BUS_ADDRESS names the private session bus and
// DESKHAND_A11Y_BUS the accessibility bus. SIGINT, SIGTERM and
// SIGHUP are passed to the command; the desktop is torn down either way.
// The exit status is the command's, 128+N when a signal N killed it, 125
// when the desktop could not start, and 127 when the command was not found.
// `go run` reports any non-zero status of the program it runs as 1 (and
// prints "exit status N"); build the command (`go build -o bin/withdesktop
// ./internal/desktoptest/withdesktop`) when the exact status matters.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

const (
	exitHarness  = 125
	exitNotFound = 127
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("withdesktop", flag.ContinueOnError)
	size := fs.String("size", "1920x1080", "screen size `WxH`")
	depth := fs.Int("depth", 24, "colour depth in bits")
	wm := fs.String("wm", "openbox", "window manager: openbox, none, or a program")
	apps := fs.String("apps", "", "comma-separated apps to start first: xterm, gtk, gtk3-widget-factory, gtk4-widget-factory")
	a11y := fs.Bool("a11y", false, "start a private session bus and AT-SPI before the apps")
	monitors := fs.String("monitors", "", "RandR monitors, NAME:WxH+X+Y[*],...")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: withdesktop [flags] -- command [args...]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cmdline := fs.Args()
	if len(cmdline) == 0 {
		fs.Usage()
		return 2
	}

	opts := desktoptest.Options{Depth: *depth, WindowManager: *wm}
	if _, err := fmt.Sscanf(*size, "%dx%d", &opts.Width, &opts.Height); err != nil {
		fmt.Fprintf(os.Stderr, "withdesktop: -size %q: want WxH, e.g. 1920x1080\n", *size)
		return 2
	}
	if *monitors != "" {
		ms, err := desktoptest.ParseMonitors(*monitors)
		if err != nil {
			fmt.Fprintf(os.Stderr, "withdesktop: -monitors: %v\n", err)
			return 2
		}
		opts.Monitors = ms
	}
	var appNames []string
	for _, a := range strings.Split(*apps, ",") {
		switch a = strings.TrimSpace(a); a {
		case "":
		case "xterm", "gtk", "gtk3-widget-factory", "gtk4-widget-factory":
			appNames = append(appNames, a)
		default:
			fmt.Fprintf(os.Stderr, "withdesktop: -apps: unknown app %q (known: xterm, gtk, gtk3-widget-factory, gtk4-widget-factory)\n", a)
			return 2
		}
	}

	// Catch signals before anything starts so none is lost in between.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)

	d, err := desktoptest.Launch(opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "withdesktop: starting desktop: %v\n", err)
		return exitHarness
	}
	defer d.Close()

	if *a11y {
		a, err := d.LaunchAccessibility()
		if err != nil {
			fmt.Fprintf(os.Stderr, "withdesktop: starting accessibility: %v\n", err)
			return exitHarness
		}
		fmt.Fprintf(os.Stderr, "withdesktop: DBUS_SESSION_BUS_ADDRESS=%s (accessibility bus %s)\n", a.SessionBus, a.Bus)
	}
	env := d.Env()
	if a := d.Accessibility(); a != nil {
		env = append(env, "DESKHAND_A11Y_BUS="+a.Bus)
	}
	for _, a := range appNames {
		var w *desktoptest.Window
		var err error
		switch a {
		case "xterm":
			w, err = d.LaunchXterm(desktoptest.XtermOptions{Title: "withdesktop xterm", Geometry: "80x24+20+20"})
		case "gtk":
			w, err = d.LaunchGTK("withdesktop gtk")
		case "gtk3-widget-factory":
			w, err = d.LaunchApp(desktoptest.GTK3WidgetFactory())
		case "gtk4-widget-factory":
			w, err = d.LaunchApp(desktoptest.GTK4WidgetFactory())
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "withdesktop: starting %s: %v\n", a, err)
			return exitHarness
		}
		key := strings.ToUpper(strings.ReplaceAll(a, "-", "_"))
		env = append(env, fmt.Sprintf("DESKHAND_WINDOW_%s=%d", key, w.ID), fmt.Sprintf("DESKHAND_PID_%s=%d", key, w.PID))
	}
	fmt.Fprintf(os.Stderr, "withdesktop: DISPLAY=%s\n", d.Display())
	select {
	case sig := <-sigs: // arrived while the desktop was starting
		fmt.Fprintf(os.Stderr, "withdesktop: %v before the command started\n", sig)
		return 128 + int(sig.(syscall.Signal))
	default:
	}

	cmd := exec.Command(cmdline[0], cmdline[1:]...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "withdesktop: %v\n", err)
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return exitNotFound
		}
		return exitHarness
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case sig := <-sigs:
			// The command shares our process group, so a terminal's ^C
			// reaches it directly; a signal sent to us alone is passed on.
			_ = cmd.Process.Signal(sig)
		case err := <-done:
			return exitStatus(err)
		}
	}
}

// exitStatus maps the command's Wait error to a shell-style exit status.
func exitStatus(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	fmt.Fprintf(os.Stderr, "withdesktop: %v\n", err)
	return exitHarness
}
