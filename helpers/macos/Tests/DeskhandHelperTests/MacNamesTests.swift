import AppKit
import DeskhandHelperCore
import XCTest

@testable import DeskhandMac

/// The AX-to-contract vocabulary, which the supervisor reads as AT-SPI's.
final class MacNamesTests: XCTestCase {
    func testRolesMapToTheContractsNames() {
        let cases: [(String, String?, String)] = [
            ("AXButton", nil, "push button"), ("AXCheckBox", nil, "check box"), ("AXTextField", nil, "text"),
            ("AXTextField", "AXSecureTextField", "password text"), ("AXSlider", nil, "slider"),
            ("AXMenuItem", nil, "menu item"), ("AXWindow", "AXStandardWindow", "frame"), ("AXWindow", "AXDialog", "dialog"),
            ("AXRadioButton", "AXTabButton", "page tab"), ("AXCheckBox", "AXSwitch", "toggle button"),
            ("AXRelevanceIndicator", nil, "relevance indicator"),
        ]
        for (role, subrole, want) in cases {
            XCTAssertEqual(AXNames.role(role, subrole: subrole), want, "\(role)/\(subrole ?? "-")")
        }
    }

    func testActionsMapAndCustomOnesStay() {
        XCTAssertEqual(AXNames.action("AXPress"), "press")
        XCTAssertEqual(AXNames.action("AXConfirm"), "activate")
        XCTAssertEqual(AXNames.action("AXShowAlternateUI"), "show alternate ui")
        XCTAssertEqual(AXNames.action("Name:Archive\nTarget:0x0\nSelector:(null)"), "Name:Archive\nTarget:0x0\nSelector:(null)")
    }

    @MainActor
    func testOverlayStaysOnScreenBesideTheAnchor() throws {
        let screen = try XCTUnwrap(NSScreen.screens.first, "needs a screen")
        let size = CGSize(width: 300, height: 120)
        let corner = Point(x: Int(screen.frame.width) - 5, y: Int(screen.frame.height) - 5)
        let frame = TeachOverlay.place(size: size, anchor: corner)
        XCTAssertTrue(screen.visibleFrame.contains(frame), "\(frame) leaves \(screen.visibleFrame)")
    }
}
