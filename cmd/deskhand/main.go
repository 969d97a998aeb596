// Deskhand is a computer-use server: it lets an AI model see and operate a
// desktop through the Model Context Protocol, behind a consent and safety
// layer. This build carries the foundation: the native capture helper and
// the supervisor that runs it.
//
// Usage:
//
//	deskhand <command> [flags] [arguments]
//
// The commands are:
//
//	helper METHOD [PARAMS]  start the capture helper, call one protocol method
//	                        (helpers/PROTOCOL.md) and print its JSON result
//	version                 print the version
//	help                    print this help
//
// Run `deskhand help <command>` for a command's flags.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/deskhand/deskhand/supervisor"
)

func main() {
	os.Exit(run())
}

func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return supervisor.Main(ctx, os.Args[1:], supervisor.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
}
