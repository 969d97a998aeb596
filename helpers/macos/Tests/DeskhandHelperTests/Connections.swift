import DeskhandHelperCore
import Foundation

/// Log lines collected from any thread.
final class LogBuffer: @unchecked Sendable {
    private let lock = NSLock()
    private var text = ""

    func append(_ line: String) {
        lock.lock()
        defer { lock.unlock() }
        text += line
    }

    var contents: String {
        lock.lock()
        defer { lock.unlock() }
        return text
    }
}

/// The helper's `Server` and `RequestHandler` in this process, fed through
/// an in-memory pipe: the same code path as the real stdio loop, minus the
/// file descriptors, so framing errors and exit statuses are covered too.
@MainActor
final class InProcessConnection: HelperConnection {
    private let input: AsyncStream<[UInt8]>.Continuation
    private var output = OutputFrames()
    private var status: Int32?
    private let logBuffer = LogBuffer()
    private var serving: Task<Void, Never>?

    init(desktop: Desktop, encoder: ImageEncoder, environment: [String: String]) {
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        input = continuation
        let buffer = logBuffer
        let log = Log(threshold: .debug) { line in buffer.append(line) }
        let handler = RequestHandler(
            configuration: .init(helperVersion: "0.0.0-test", faults: environment["DESKHAND_HELPER_FAULTS"] == "1"),
            desktop: desktop, encoder: encoder, log: log)
        let server = Server(handler: handler, log: log)
        serving = Task { @MainActor [weak self] in
            let code = await server.serve(stream) { bytes in
                self?.output.push(bytes)
            }
            self?.status = code
        }
    }

    func send(_ bytes: [UInt8]) throws {
        input.yield(bytes)
    }

    func closeInput() {
        input.finish()
    }

    func next(timeout: TimeInterval) async -> HelperOutput? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let next = output.next(ended: status != nil) {
                return next
            }
            if Date() >= deadline {
                return nil
            }
            // Lets the serving task run on the main actor.
            try? await Task.sleep(nanoseconds: 1_000_000)
        }
    }

    func waitForExit(timeout: TimeInterval) async -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while status == nil && Date() < deadline {
            try? await Task.sleep(nanoseconds: 1_000_000)
        }
        return status
    }

    var log: String { logBuffer.contents }

    func stop() {
        input.finish()
        serving?.cancel()
    }
}

/// The built `deskhand-helper` executable as a child process with pipes,
/// as deskhand runs it.
@MainActor
final class SubprocessConnection: HelperConnection {
    /// stdout bytes and the end of stdout, filled by the pipe's handler
    /// thread and drained by the test.
    private final class Inbox: @unchecked Sendable {
        private let lock = NSLock()
        private var bytes: [UInt8] = []
        private var ended = false

        func append(_ data: Data) {
            lock.lock()
            defer { lock.unlock() }
            bytes.append(contentsOf: data)
        }

        func end() {
            lock.lock()
            defer { lock.unlock() }
            ended = true
        }

        func take() -> ([UInt8], Bool) {
            lock.lock()
            defer { lock.unlock() }
            let taken = bytes
            bytes.removeAll()
            return (taken, ended)
        }
    }

    private let process = Process()
    private let stdinPipe = Pipe()
    private let stdoutPipe = Pipe()
    private let stderrPipe = Pipe()
    private let inbox = Inbox()
    private let logBuffer = LogBuffer()
    private var output = OutputFrames()
    private var stdoutEnded = false

    /// The helper next to the test bundle in the build directory.
    static var executable: URL {
        Bundle(for: BundleToken.self).bundleURL.deletingLastPathComponent().appendingPathComponent("deskhand-helper")
    }

    private final class BundleToken {}

    init(executable: URL, environment: [String: String]) throws {
        process.executableURL = executable
        var merged = ProcessInfo.processInfo.environment
        merged["DESKHAND_HELPER_LOG"] = "debug"
        merged["DESKHAND_HELPER_FAULTS"] = nil
        for (key, value) in environment {
            merged[key] = value
        }
        process.environment = merged
        process.standardInput = stdinPipe
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        let inbox = inbox
        stdoutPipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty {
                inbox.end()
                handle.readabilityHandler = nil
            } else {
                inbox.append(data)
            }
        }
        let logBuffer = logBuffer
        stderrPipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
            } else {
                logBuffer.append(String(decoding: data, as: UTF8.self))
            }
        }
        try process.run()
    }

    func send(_ bytes: [UInt8]) throws {
        try stdinPipe.fileHandleForWriting.write(contentsOf: Data(bytes))
    }

    func closeInput() {
        try? stdinPipe.fileHandleForWriting.close()
    }

    func next(timeout: TimeInterval) async -> HelperOutput? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let (bytes, ended) = inbox.take()
            output.push(bytes)
            stdoutEnded = stdoutEnded || ended
            if let next = output.next(ended: stdoutEnded) {
                return next
            }
            if Date() >= deadline {
                return nil
            }
            try? await Task.sleep(nanoseconds: 2_000_000)
        }
    }

    func waitForExit(timeout: TimeInterval) async -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline {
            try? await Task.sleep(nanoseconds: 2_000_000)
        }
        if process.isRunning {
            return nil
        }
        // A signal shows as 128 + its number, as a shell would report it.
        return process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
    }

    var log: String { logBuffer.contents }

    func stop() {
        closeInput()
        if process.isRunning {
            process.terminate()
        }
    }
}
