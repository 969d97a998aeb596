import CoreGraphics
import DeskhandHelperCore
import DeskhandMac
import Foundation
import XCTest

/// Replays every transcript in helpers/testdata/transcripts on macOS only:
///
/// 1. in process against the real `MacDesktop` (ScreenCaptureKit and all);
/// 2. against the built `deskhand-helper` binary over real pipes, which is
///    what deskhand runs.
///
/// Transcripts that need a display are skipped when there is no GUI session
/// or Screen Recording is not granted to the process running the tests, and
/// fail instead when the environment variable CI is set.
final class MacTranscriptTests: XCTestCase {
    override class func setUp() {
        super.setUp()
        signal(SIGPIPE, SIG_IGN)
    }

    private var transcripts: [Transcript] = []

    override func setUpWithError() throws {
        transcripts = try Transcript.loadAll()
    }

    @MainActor
    func testEveryTranscriptInProcessOnTheRealDesktop() async throws {
        var skipped: [String] = []
        for transcript in transcripts {
            if transcript.needsDisplay, let why = Self.realDesktopMissing() {
                try Self.skipOrFail(transcript, why)
                skipped.append(transcript.name)
                continue
            }
            let helper = InProcessConnection(
                desktop: MacDesktop(log: .discard), encoder: MacImageEncoder(), environment: transcript.environment)
            try await TranscriptRunner.replay(transcript, on: helper)
        }
        if !skipped.isEmpty {
            print("skipped (no display or no Screen Recording): \(skipped.joined(separator: ", "))")
        }
    }

    @MainActor
    func testEveryTranscriptAgainstTheBuiltHelper() async throws {
        let executable = SubprocessConnection.executable
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            XCTFail("no helper binary at \(executable.path); `swift test` builds it with the test bundle")
            return
        }
        var skipped: [String] = []
        for transcript in transcripts {
            if transcript.needsDisplay, let why = Self.realDesktopMissing() {
                try Self.skipOrFail(transcript, why)
                skipped.append(transcript.name)
                continue
            }
            let helper = try SubprocessConnection(executable: executable, environment: transcript.environment)
            try await TranscriptRunner.replay(transcript, on: helper)
        }
        if !skipped.isEmpty {
            print("skipped (no display or no Screen Recording): \(skipped.joined(separator: ", "))")
        }
    }

    /// Why the real desktop cannot serve display transcripts here, or nil.
    private static func realDesktopMissing() -> String? {
        if CGSessionCopyCurrentDictionary() == nil {
            return "no GUI session (tests run over ssh or as a daemon)"
        }
        if !CGPreflightScreenCaptureAccess() {
            return "Screen Recording is not granted to the process running the tests (System Settings > Privacy & Security > Screen Recording: add Terminal or Xcode)"
        }
        return nil
    }

    private static func skipOrFail(_ transcript: Transcript, _ why: String) throws {
        if ProcessInfo.processInfo.environment["CI"] != nil {
            throw TranscriptFailure(message: "\(transcript.name) needs the real desktop, but \(why); CI must provide it")
        }
    }
}
