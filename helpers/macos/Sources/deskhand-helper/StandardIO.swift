import Darwin
import Foundation

/// stdin as an async sequence of byte chunks. A dedicated thread blocks in
/// read(2), so the main thread stays free for the run loop that AppKit and
/// ScreenCaptureKit deliver on; the stream finishes at end of file or on a
/// read error.
enum StandardInput {
    static func chunks(log: @escaping @Sendable (String) -> Void) -> AsyncStream<[UInt8]> {
        AsyncStream { continuation in
            let reader = Thread {
                var buffer = [UInt8](repeating: 0, count: 64 * 1024)
                while true {
                    let count = buffer.withUnsafeMutableBytes { raw in
                        read(STDIN_FILENO, raw.baseAddress, raw.count)
                    }
                    if count > 0 {
                        continuation.yield(Array(buffer[0..<count]))
                    } else if count == 0 {
                        break
                    } else if errno != EINTR {
                        log("reading stdin: \(String(cString: strerror(errno)))")
                        break
                    }
                }
                continuation.finish()
            }
            reader.name = "deskhand-helper stdin"
            reader.start()
        }
    }
}

/// stdout, written with write(2) so a closed pipe is an error to report,
/// not an Objective-C exception (FileHandle.write) or a SIGPIPE (ignored in
/// main).
enum StandardOutput {
    struct WriteError: LocalizedError {
        let code: Int32
        var errorDescription: String? { "writing to stdout: \(String(cString: strerror(code)))" }
    }

    static func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            var offset = 0
            while offset < raw.count {
                let written = Darwin.write(STDOUT_FILENO, base + offset, raw.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    throw WriteError(code: errno)
                }
            }
        }
    }
}

/// Exits when the parent process does. On Linux the kernel does this
/// (PR_SET_PDEATHSIG); macOS has no such flag, so the helper watches its
/// parent with a kqueue process source. Closing stdin (which a dying parent
/// also does) is the ordinary way out; this covers a parent whose stdin
/// pipe outlives it.
@MainActor
enum ParentWatch {
    private static var source: DispatchSourceProcess?

    static func start(log: @escaping (String) -> Void) {
        let parent = getppid()
        guard parent > 1 else { return }
        let watch = DispatchSource.makeProcessSource(identifier: parent, eventMask: .exit, queue: .main)
        watch.setEventHandler {
            log("parent process \(parent) exited; exiting")
            exit(0)
        }
        watch.resume()
        source = watch
        // The parent may have gone before the source was armed.
        if getppid() != parent {
            log("parent process \(parent) exited during startup; exiting")
            exit(0)
        }
    }
}
