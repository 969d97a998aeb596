// deskhand-helper: deskhand's macOS capture helper.
//
// Usage: deskhand-helper [--version | --help | --check-permissions | --request-permissions]
//
// Without arguments it speaks JSON-RPC 2.0 with Content-Length framing on
// stdin/stdout (helpers/PROTOCOL.md) and logs to stderr. Environment:
// DESKHAND_HELPER_LOG (debug|info|warn|error), DESKHAND_HELPER_FAULTS=1
// (tests only).
import AppKit
import DeskhandHelperCore
import DeskhandMac
import Foundation

let helperVersion = "0.1.0"

let usage = """
    deskhand-helper: deskhand's macOS capture helper (ScreenCaptureKit)

    Usage: deskhand-helper [--version | --help | --check-permissions | --request-permissions]

    Started by deskhand, it answers JSON-RPC 2.0 requests framed with
    Content-Length headers on stdin and writes responses to stdout, as described
    in helpers/PROTOCOL.md. Logs go to stderr. It exits when stdin closes.

    It never asks macOS for permissions by itself. Run it once by hand with
    --request-permissions to get the system prompts and the System Settings
    panes for Screen Recording and Accessibility; --check-permissions prints
    what is granted and exits 1 if anything is missing.

    Environment:
      DESKHAND_HELPER_LOG        debug, info (default), warn or error
      DESKHAND_HELPER_FAULTS=1   answer the test-only fault.* methods

    """

func printLine(_ line: String) {
    print(line)
}

let arguments = Array(CommandLine.arguments.dropFirst())
if let argument = arguments.first {
    switch argument {
    case "--version", "-V":
        print("deskhand-helper \(helperVersion)")
        exit(0)
    case "--help", "-h":
        print(usage, terminator: "")
        exit(0)
    case "--check-permissions":
        let screenRecording = Permissions.screenRecordingPreflight()
        let accessibility = Permissions.accessibilityTrusted()
        print("Screen Recording: \(screenRecording ? "granted" : "not granted")")
        print("Accessibility: \(accessibility ? "granted" : "not granted")")
        exit(screenRecording && accessibility ? 0 : 1)
    case "--request-permissions":
        let status = MainActor.assumeIsolated { Permissions.requestInteractively(output: printLine) }
        exit(status)
    default:
        fputs("deskhand-helper: unknown argument \(argument)\n\n\(usage)", stderr)
        exit(2)
    }
}

// A closed stdout must be a write error the loop reports, not a signal.
signal(SIGPIPE, SIG_IGN)

let log = Log.fromEnvironment()
let faults = ProcessInfo.processInfo.environment["DESKHAND_HELPER_FAULTS"] == "1"
log.debug("deskhand-helper \(helperVersion) starting (pid \(getpid()))")

let input = StandardInput.chunks { message in log.error(message) }

Task { @MainActor in
    ParentWatch.start { message in log.info(message) }
    let desktop = MacDesktop(log: log)
    let handler = RequestHandler(
        configuration: .init(helperVersion: helperVersion, faults: faults),
        desktop: desktop,
        encoder: MacImageEncoder(),
        log: log)
    let server = Server(handler: handler, log: log)
    let status = await server.serve(input, write: StandardOutput.write)
    exit(status)
}

// NSApplication's loop serves the main actor's queue and delivers what
// AppKit needs delivered: NSWorkspace's notion of the frontmost app, and
// the mouse events of the teaching overlay's buttons (a bare RunLoop would
// never dispatch them). As an accessory app the helper has no Dock icon or
// menu bar and never activates; the task above ends the process.
let application = NSApplication.shared
_ = application.setActivationPolicy(.accessory)
application.run()
