import DeskhandHelperCore
import Foundation

/// A deterministic desktop: one 1920x1080 display at scale 2, three windows,
/// a pasteboard in memory. It lets the transcripts exercise the whole
/// handler (parameter checks, error codes, result shapes, capture ids, the
/// patch check) on any Mac, with or without a screen or permissions.
@MainActor
final class FakeDesktop: Desktop {
    static let display = Display(
        id: 69_733_382, name: "Fake Display", origin: Point(x: 0, y: 0),
        logical: Size(width: 1920, height: 1080), physical: Size(width: 3840, height: 2160), scale: 2, primary: true,
        mm: Size(width: 597, height: 336))

    static let editor = App(pid: 501, name: "TextEdit", exe: "/System/Applications/TextEdit.app/Contents/MacOS/TextEdit", bundleID: "com.apple.TextEdit")
    static let terminal = App(pid: 502, name: "Terminal", exe: "/System/Applications/Utilities/Terminal.app/Contents/MacOS/Terminal", bundleID: "com.apple.Terminal")

    var fakeWindows: [Window] = [
        Window(
            id: 10, title: "Untitled", app: FakeDesktop.editor, bounds: Rect(x: 100, y: 100, width: 800, height: 600),
            client: Rect(x: 100, y: 100, width: 800, height: 600), minimized: false, hidden: false, focused: true,
            desktop: nil),
        Window(
            id: 11, title: "zsh", app: FakeDesktop.terminal, bounds: Rect(x: 600, y: 400, width: 700, height: 500),
            client: Rect(x: 600, y: 400, width: 700, height: 500), minimized: false, hidden: false, focused: false,
            desktop: nil),
        Window(
            id: 12, title: "Minimized", app: FakeDesktop.editor, bounds: Rect(x: 0, y: 0, width: 300, height: 200),
            client: Rect(x: 0, y: 0, width: 300, height: 200), minimized: true, hidden: false, focused: false,
            desktop: nil),
    ]
    var pasteboard: String?
    /// Bumped to make the "screen" change under the next patch check.
    var screenGeneration: UInt8 = 0

    func platformInfo() async -> PlatformInfo {
        PlatformInfo(
            platform: "macos", capabilities: MacCapabilities.all, display: Self.display.name,
            extensions: ["fake": true], displayError: nil)
    }

    func displays() async throws -> [Display] {
        [Self.display]
    }

    /// How many times the handler reached the "screen".
    var captures = 0

    func capture(_ request: CaptureRequest) async throws -> CapturedFrame {
        captures += 1
        let source: Rect
        var displayID: DisplayID?
        switch request.target {
        case .display(let id):
            if let id, id != Self.display.id {
                throw DesktopError.noSuchDisplay(id, known: [Self.display])
            }
            source = Self.display.bounds
            displayID = Self.display.id
        case .rect(let rect):
            guard Self.display.bounds.contains(rect) else {
                throw DesktopError.rectOutsideScreen(rect, displays: [Self.display])
            }
            source = rect
        }
        let visible = fakeWindows.filter { $0.isVisible && $0.bounds.intersection(source) != nil }.map(\.id)
        let masked = request.mask.filter { visible.contains($0) }
        return CapturedFrame(
            pixels: pixels(of: source), source: source, display: displayID, masked: masked, method: "fake",
            recaptureContext: nil)
    }

    func recapture(_ rect: Rect, pixelSize: Size, like frame: CapturedFrame) async throws -> PixelBuffer {
        let live = pixels(of: frame.source)
        let region = Geometry.pixelRect(of: rect, in: frame.source, pixels: Size(width: live.width, height: live.height))
        guard region.width == pixelSize.width, region.height == pixelSize.height,
            let patch = live.crop(x: region.x, y: region.y, width: region.width, height: region.height)
        else {
            throw ProtocolError.internal("fake recapture asked for \(pixelSize.width)x\(pixelSize.height) at \(rect)")
        }
        return patch
    }

    /// A gradient at one pixel per point, offset by `screenGeneration`.
    private func pixels(of source: Rect) -> PixelBuffer {
        var bytes = [UInt8](repeating: 255, count: source.width * source.height * 4)
        for row in 0..<source.height {
            for column in 0..<source.width {
                let offset = (row * source.width + column) * 4
                bytes[offset] = UInt8(truncatingIfNeeded: source.x + column) &+ screenGeneration
                bytes[offset + 1] = UInt8(truncatingIfNeeded: source.y + row)
                bytes[offset + 2] = UInt8(truncatingIfNeeded: (source.x + column) ^ (source.y + row))
            }
        }
        return PixelBuffer(width: source.width, height: source.height, bytesPerRow: source.width * 4, bytes: bytes)
    }

    func windows(includeHidden: Bool) async throws -> WindowList {
        let listed = fakeWindows.filter { includeHidden || $0.isVisible }
        return WindowList(windows: listed, focused: 10, frontmost: Self.editor)
    }

    func window(at point: Point) async throws -> Window? {
        fakeWindows.first { $0.isVisible && $0.bounds.contains(point) }
    }

    func readClipboard() async throws -> String {
        guard let pasteboard else { throw DesktopError.clipboardEmpty }
        return pasteboard
    }

    func writeClipboard(_ text: String) async throws {
        pasteboard = text
    }

    func hide(_ ids: [WindowID]) async throws -> [WindowID] {
        try checkKnown(ids)
        var changed: [WindowID] = []
        for id in ids {
            if let index = fakeWindows.firstIndex(where: { $0.id == id }), fakeWindows[index].isVisible {
                fakeWindows[index].hidden = true
                changed.append(id)
            }
        }
        return changed
    }

    func restore(_ ids: [WindowID]) async throws -> [WindowID] {
        try checkKnown(ids)
        var changed: [WindowID] = []
        for id in ids {
            if let index = fakeWindows.firstIndex(where: { $0.id == id }), fakeWindows[index].hidden {
                fakeWindows[index].hidden = false
                changed.append(id)
            }
        }
        return changed
    }

    private func checkKnown(_ ids: [WindowID]) throws {
        let unknown = ids.filter { id in !fakeWindows.contains { $0.id == id } }
        if !unknown.isEmpty {
            throw DesktopError.noSuchWindows(unknown)
        }
    }

    var granted: [Permission: Bool] = [.screenRecording: true, .accessibility: true, .inputMonitoring: true]

    func permissionStatus() async -> [Permission: Bool] {
        granted
    }

    /// Whether the "system" refuses the keyboard tap, as macOS does without
    /// Input Monitoring; and the watch's callback once started.
    var refuseKeyboardTap = false
    var onKeyDown: (@MainActor (KeyDown) -> Void)?

    func watchKeyboard(_ onKeyDown: @escaping @MainActor (KeyDown) -> Void) throws {
        if refuseKeyboardTap {
            throw PermissionError.inputMonitoringNotGranted
        }
        self.onKeyDown = onKeyDown
    }

    func permissionDenied(_ permission: Permission) -> ProtocolError {
        switch permission {
        case .screenRecording: return PermissionError.screenRecordingNotGranted.protocolError
        case .accessibility: return PermissionError.accessibilityNotGranted.protocolError
        case .inputMonitoring: return PermissionError.inputMonitoringNotGranted.protocolError
        }
    }

    /// Three keys of a French (AZERTY) layout, enough to see shapes.
    func keyLayout() async throws -> JSON {
        [
            "source": "com.apple.keylayout.French", "name": "French",
            "keys": [
                ["code": 0, "base": "q", "shift": "Q", "command": "q", "command_shift": "Q"],
                ["code": 12, "base": "a", "shift": "A", "command": "a", "command_shift": "A"],
                ["code": 20, "base": "\"", "shift": "3", "command": "\"", "command_shift": "3"],
            ],
        ]
    }

    /// The fake desktop has no accessibility tree: every a11y method answers
    /// as a Mac without the Accessibility grant does.
    func a11yApps() async throws -> JSON {
        ["available": false, "reason": .string(AccessibilityError.notTrusted.errorDescription ?? ""), "apps": []]
    }

    func a11yTree(_ request: A11yTreeRequest) async throws -> JSON {
        throw AccessibilityError.notTrusted
    }

    func a11yElement(pid: Int32, ref: String) async throws -> JSON {
        throw AccessibilityError.notTrusted
    }

    func a11yAct(pid: Int32, ref: String, _ operation: A11yOperation) async throws {
        throw AccessibilityError.notTrusted
    }

    /// The overlay as state: what was shown, and the choice a test makes.
    var teaching: TeachRequest?
    var teachChoice: String?

    func teachShow(_ request: TeachRequest) async throws -> JSON {
        teaching = request
        teachChoice = nil
        let origin = request.anchor ?? Point(x: 100, y: 100)
        func rect(_ x: Int, _ y: Int, _ w: Int, _ h: Int) -> JSON { ["x": JSON(x), "y": JSON(y), "w": JSON(w), "h": JSON(h)] }
        return [
            "bounds": rect(origin.x + 16, origin.y + 16, 320, 120),
            "next": rect(origin.x + 240, origin.y + 96, 80, 28),
            "exit": rect(origin.x + 150, origin.y + 96, 80, 28),
        ]
    }

    func teachPoll() async throws -> JSON {
        ["visible": .bool(teaching != nil), "choice": .optional(teachChoice) { .string($0) }]
    }

    func teachHide() async throws {
        teaching = nil
        teachChoice = nil
    }

    func indicator(visible: Bool) async throws -> JSON {
        ["visible": .bool(visible), "bounds": .null]
    }
}

/// Stands in for ImageIO: a small header naming the format and size, then
/// the first pixels, so results are base64 of bytes that depend on the
/// request.
struct FakeEncoder: ImageEncoder {
    func encode(_ pixels: PixelBuffer, size: Size, format: ImageFormat, quality: Int) throws -> [UInt8] {
        var bytes = Array("FAKE \(format.rawValue) \(size.width)x\(size.height) q\(quality)\n".utf8)
        bytes.append(contentsOf: pixels.bytes.prefix(64))
        return bytes
    }
}
