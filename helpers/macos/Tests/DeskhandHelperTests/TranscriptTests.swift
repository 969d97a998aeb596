import DeskhandHelperCore
import Foundation
import XCTest

/// Replays every transcript in helpers/testdata/transcripts in process
/// against `FakeDesktop`: the whole protocol surface, on Linux and on any
/// Mac, permissions or not. MacTranscriptTests replays them against the
/// real desktop and the built helper too.
final class TranscriptTests: XCTestCase, @unchecked Sendable {
    override class func setUp() {
        super.setUp()
        // A helper that exits while a step still writes must not kill the
        // test runner.
        signal(SIGPIPE, SIG_IGN)
    }

    @MainActor
    func testEveryTranscriptAgainstTheFakeDesktop() async throws {
        let transcripts = try Transcript.loadAll()
        XCTAssertGreaterThanOrEqual(
            transcripts.count, 20, "expected the transcript set in \(Transcript.directory.path)")
        for transcript in transcripts {
            let helper = InProcessConnection(
                desktop: FakeDesktop(), encoder: FakeEncoder(), environment: transcript.environment)
            try await TranscriptRunner.replay(transcript, on: helper)
        }
    }
}
