import DeskhandHelperCore
import Foundation

/// One protocol transcript (helpers/testdata/transcripts/README.md).
struct Transcript {
    struct Step {
        var send: JSON?
        var sendRaw: String?
        var closeStdin: Bool
        var expect: JSON?
        var expectExit: Int32?
        /// The step as written, for failure messages.
        var source: JSON
    }

    let name: String
    let description: String
    let needsDisplay: Bool
    let environment: [String: String]
    /// The helper platforms the transcript is for; nil means every one.
    let platforms: [String]?
    let steps: [Step]

    /// helpers/testdata/transcripts, found from this file's path so that
    /// `swift test` works from any directory.
    static var directory: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // DeskhandHelperTests
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // macos
            .deletingLastPathComponent()  // helpers
            .appendingPathComponent("testdata/transcripts", isDirectory: true)
    }

    /// Every transcript for the macOS helper, sorted by name.
    static func loadAll() throws -> [Transcript] {
        let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "json" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        return try files.map(load).filter { $0.platforms?.contains("macos") ?? true }
    }

    static func load(_ file: URL) throws -> Transcript {
        let name = file.deletingPathExtension().lastPathComponent
        let bytes = try [UInt8](Data(contentsOf: file))
        let value = try JSON.parse(bytes)
        func bad(_ why: String) -> Error {
            TranscriptFailure(message: "\(name).json: \(why)")
        }
        guard let object = value.objectValue, let steps = object["steps"]?.arrayValue else {
            throw bad("not a transcript object with \"steps\"")
        }
        var environment: [String: String] = [:]
        for (key, value) in object["env"]?.objectValue?.members ?? [] {
            guard let string = value.stringValue else { throw bad("env values must be strings") }
            environment[key] = string
        }
        return Transcript(
            name: name,
            description: object["description"]?.stringValue ?? "",
            needsDisplay: object["needs_display"] == .bool(true),
            environment: environment,
            platforms: try object["platforms"].map { value -> [String] in
                guard let items = value.arrayValue else { throw bad("platforms must be an array of strings") }
                return try items.map { item -> String in
                    guard let name = item.stringValue else { throw bad("platforms must be an array of strings") }
                    return name
                }
            },
            steps: try steps.map { step -> Step in
                guard let fields = step.objectValue else { throw bad("a step is not an object") }
                var exit: Int32?
                if let code = fields["expect_exit"] {
                    guard let int = code.intValue else { throw bad("expect_exit must be an integer") }
                    exit = Int32(int)
                }
                return Step(
                    send: fields["send"],
                    sendRaw: fields["send_raw"]?.stringValue,
                    closeStdin: fields["close_stdin"] == .bool(true),
                    expect: fields["expect"],
                    expectExit: exit,
                    source: step)
            })
    }
}

struct TranscriptFailure: LocalizedError {
    let message: String
    var errorDescription: String? { message }
}

/// What a helper wrote to stdout, one unit at a time.
enum HelperOutput: Equatable {
    case frame(JSON)
    /// stdout ended.
    case eof
    /// Bytes that are not a well-formed frame of JSON.
    case garbage(String)
}

/// A running helper, in-process or a real process.
@MainActor
protocol HelperConnection: AnyObject {
    func send(_ bytes: [UInt8]) throws
    func closeInput()
    /// The next output, or nil when none arrived within `timeout`.
    func next(timeout: TimeInterval) async -> HelperOutput?
    /// The exit status, or nil when the helper still runs after `timeout`.
    func waitForExit(timeout: TimeInterval) async -> Int32?
    /// The helper's log so far, for failure messages.
    var log: String { get }
    /// Stops the helper if it still runs.
    func stop()
}

/// Splits stdout bytes into frames strictly, as the transcript runner
/// requires: anything that is not `Content-Length: N\r\n\r\n` plus N bytes of
/// JSON is garbage.
struct OutputFrames {
    private var decoder = FrameDecoder(cap: FrameLimits.maxResponseBytes)
    private var broken = false

    mutating func push(_ bytes: [UInt8]) {
        decoder.push(bytes)
    }

    /// The next output, nil when more bytes are needed; `.eof` once `ended`
    /// and everything was handed out.
    mutating func next(ended: Bool) -> HelperOutput? {
        if broken { return nil }
        do {
            if let body = try decoder.next() {
                do {
                    return .frame(try JSON.parse(body))
                } catch {
                    broken = true
                    return .garbage("a frame whose body is not JSON: \(String(decoding: body.prefix(200), as: UTF8.self))")
                }
            }
        } catch {
            broken = true
            return .garbage(error.localizedDescription)
        }
        if ended {
            if decoder.isIdle { return .eof }
            broken = true
            return .garbage("stdout ended inside a frame")
        }
        return nil
    }
}

/// Replays a transcript the way helpers/linux/tests/transcripts.rs does.
@MainActor
enum TranscriptRunner {
    /// How long one step may wait for an answer or an exit.
    static let stepTimeout: TimeInterval = 30

    static func replay(_ transcript: Transcript, on helper: HelperConnection) async throws {
        defer { helper.stop() }
        var exited = false
        for (index, step) in transcript.steps.enumerated() {
            let here = "\(transcript.name) step \(index)"
            func fail(_ why: String) -> TranscriptFailure {
                TranscriptFailure(
                    message: "\(here): \(why)\nstep: \(Pattern.shorten(step.source))\nhelper log:\n\(helper.log)")
            }
            if exited {
                throw fail("a step after the helper exited")
            }
            if let message = step.send {
                try helper.send(encodeFrame(message.serialized()))
            }
            if let raw = step.sendRaw {
                try helper.send(Array(raw.utf8))
            }
            if step.closeStdin {
                helper.closeInput()
            }
            if let pattern = step.expect {
                switch await helper.next(timeout: stepTimeout) {
                case .frame(let actual)?:
                    if let why = Pattern.mismatch(pattern, actual) {
                        throw fail("response does not match: \(why)\nresponse: \(Pattern.shorten(actual))")
                    }
                case let other?:
                    throw fail("expected a response, got \(other)")
                case nil:
                    throw fail("no response within \(stepTimeout) s")
                }
            }
            if let code = step.expectExit {
                guard let status = await helper.waitForExit(timeout: stepTimeout) else {
                    throw fail("helper still running after \(stepTimeout) s, want exit \(code)")
                }
                if status != code {
                    throw fail("helper exited with status \(status), want \(code)")
                }
                try await expectNoMoreOutput(helper, here)
                exited = true
            }
        }
        if !exited {
            // Every transcript also checks the end: EOF on stdin means exit 0.
            helper.closeInput()
            let status = await helper.waitForExit(timeout: 5)
            if status != 0 {
                throw TranscriptFailure(
                    message: "\(transcript.name): after stdin closed the helper gave \(status.map { "status \($0)" } ?? "no exit"), want exit 0\nhelper log:\n\(helper.log)")
            }
            try await expectNoMoreOutput(helper, transcript.name)
        }
    }

    private static func expectNoMoreOutput(_ helper: HelperConnection, _ here: String) async throws {
        let output = await helper.next(timeout: 5)
        if output != .eof {
            throw TranscriptFailure(
                message: "\(here): unexpected output after the last expected response: \(output.map { "\($0)" } ?? "none, and stdout still open")\nhelper log:\n\(helper.log)")
        }
    }
}
