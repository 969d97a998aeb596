// Deskhand is a computer-use server: it lets an AI model see and operate a
// desktop through the Model Context Protocol, behind a consent and safety
// layer. It runs input in-process and gets pixels, windows and the
// clipboard from a native capture helper (helpers/PROTOCOL.md).
//
// Usage:
//
//	deskhand [serve flags]
//	deskhand <command> [flags] [arguments]
//
// The commands are:
//
//	serve                   serve the computer-use tools over MCP on stdio
//	                        (the default command), or Streamable HTTP with
//	                        --http ADDR
//	helper METHOD [PARAMS]  start the capture helper, call one protocol method
//	                        and print its JSON result
//	install                 download, verify and activate the capture helper
//	                        (or --rollback to the previous one)
//	grants SUBCOMMAND       list, forget, allow or disallow pre-approved and
//	                        declined apps, outside a session
//	log [-f] [--session ID] show the action record: every tool call, its
//	                        arguments, the gates' decisions and the result
//	doctor                  check the display, extensions, helper, lock,
//	                        turn journal and paths, and say how to fix each
//	                        problem; --repair gives back the windows and
//	                        clipboard a killed deskhand left
//	version                 print the version (also --version and -v)
//	help [COMMAND]          print this help, or a command's flags, on
//	                        stdout (also --help and -h)
//
// One more command is internal, started by deskhand itself and not for
// people: on X11, clipboard-keeper keeps the clipboard text a turn put
// back after deskhand exits.
//
// Run `deskhand help <command>` for a command's flags. A mistyped flag
// gets a short usage and the nearest flag on stderr, and exit status 2.
// The commands live
// in package supervisor/cli; the composition they drive is package
// supervisor. This file only sets up the signals and calls run.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/deskhand/deskhand/supervisor/cli"
)

func main() {
	os.Exit(run())
}

func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return cli.Main(ctx, os.Args[1:], cli.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
}
