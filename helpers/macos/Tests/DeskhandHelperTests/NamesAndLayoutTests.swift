import DeskhandHelperCore
import XCTest

/// The AX-to-contract vocabulary, which the supervisor reads as AT-SPI's.
final class AXNamesTests: XCTestCase {
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
}

final class OverlayPlacementTests: XCTestCase {
    let screen = OverlayPlacement.Frame(minX: 0, minY: 0, maxX: 1440, maxY: 875)

    func testBelowAndRightOfTheAnchorWhereItFits() {
        let placed = OverlayPlacement.place(width: 300, height: 120, anchor: (x: 100, y: 600), visible: screen, gap: 16)
        XCTAssertEqual(placed.x, 116)
        XCTAssertEqual(placed.y, 464)
    }

    func testFlipsLeftAndAboveAtTheEdges() {
        let placed = OverlayPlacement.place(width: 300, height: 120, anchor: (x: 1400, y: 50), visible: screen, gap: 16)
        XCTAssertEqual(placed.x, 1084, "flipped to the left of the anchor")
        XCTAssertEqual(placed.y, 66, "flipped above the anchor")
    }

    func testStaysInsideTheVisibleFrame() {
        for anchor in [(x: -500.0, y: -500.0), (x: 5000, y: 5000), (x: 1435, y: 870), (x: 0, y: 0)] {
            let placed = OverlayPlacement.place(width: 300, height: 120, anchor: anchor, visible: screen, gap: 16)
            XCTAssertGreaterThanOrEqual(placed.x, screen.minX)
            XCTAssertGreaterThanOrEqual(placed.y, screen.minY)
            XCTAssertLessThanOrEqual(placed.x + 300, screen.maxX, "anchor \(anchor)")
            XCTAssertLessThanOrEqual(placed.y + 120, screen.maxY, "anchor \(anchor)")
        }
    }

    func testTopRightCornerWithoutAnAnchor() {
        let placed = OverlayPlacement.place(width: 300, height: 120, anchor: nil, visible: screen, gap: 16)
        XCTAssertEqual(placed.x, 1440 - 300 - 24)
        XCTAssertEqual(placed.y, 875 - 120 - 24)
    }
}

final class MaskPlanTests: XCTestCase {
    func testMaskOthersMasksEveryWindowNotKeptOnce() {
        let app = App(pid: 1, name: "a", exe: nil, bundleID: nil)
        let windows = [30, 20, 10, 40].map { id in
            Window(
                id: WindowID(id), title: "", app: app, bounds: Rect(x: 0, y: 0, width: 10, height: 10),
                client: Rect(x: 0, y: 0, width: 10, height: 10), minimized: false, hidden: false, focused: false,
                desktop: nil)
        }
        let list = WindowList(windows: windows, focused: nil, frontmost: nil)
        XCTAssertEqual(MaskPlan.maskOthers(mask: [20], keep: [10, 20], windows: list), [20, 30, 40])
        XCTAssertEqual(MaskPlan.maskOthers(mask: [], keep: [], windows: list), [30, 20, 10, 40])
    }
}
