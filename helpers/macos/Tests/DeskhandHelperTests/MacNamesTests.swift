import AppKit
import DeskhandHelperCore
import XCTest

@testable import DeskhandMac

/// The overlay on a real screen (the placement maths are in OverlayTests).
final class MacNamesTests: XCTestCase {
    @MainActor
    func testOverlayStaysOnScreenBesideTheAnchor() throws {
        let screen = try XCTUnwrap(NSScreen.screens.first, "needs a screen")
        let size = CGSize(width: 300, height: 120)
        let corner = Point(x: Int(screen.frame.width) - 5, y: Int(screen.frame.height) - 5)
        let frame = TeachOverlay.place(size: size, anchor: corner)
        XCTAssertTrue(screen.visibleFrame.contains(frame), "\(frame) leaves \(screen.visibleFrame)")
    }
}
