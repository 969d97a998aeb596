import AppKit
import CoreGraphics
import DeskhandHelperCore
import Foundation

/// The macOS desktop behind the request handler: Quartz Display Services
/// for displays, ScreenCaptureKit for pixels, CGWindowList and
/// NSRunningApplication for windows and apps, NSPasteboard for text.
@MainActor
public final class MacDesktop: Desktop {
    /// Every capability this helper has (`MacCapabilities.all`).
    public static let capabilities = MacCapabilities.all

    private let log: Log
    private let content: ShareableContentCache
    private let capturer: ScreenCapturer
    private let visibility = AppVisibility()
    private let accessibility = Accessibility()
    private let overlay: TeachOverlay
    private let badge: IndicatorPanel
    private let keyboard: KeyboardWatch

    public init(log: Log) {
        self.log = log
        content = ShareableContentCache(log: log)
        capturer = ScreenCapturer(content: content, log: log)
        overlay = TeachOverlay(log: log)
        badge = IndicatorPanel(log: log)
        keyboard = KeyboardWatch(log: log)
        // The overlay's window must be left out of the next capture's
        // content filter, which cached content from before it would miss.
        overlay.onChange = { [content] in content.invalidate() }
        badge.onChange = { [content] in content.invalidate() }
    }

    /// True inside a logged-in GUI session, where the window server answers.
    private var hasWindowServerSession: Bool {
        CGSessionCopyCurrentDictionary() != nil
    }

    private func requireSession() throws {
        guard hasWindowServerSession else {
            throw DesktopError.noWindowServerSession
        }
    }

    public func platformInfo() async -> PlatformInfo {
        let version = ProcessInfo.processInfo.operatingSystemVersion
        var extensions: JSONObject = [
            "macos": .string("\(version.majorVersion).\(version.minorVersion).\(version.patchVersion)"),
            "bundle_id": .optional(Bundle.main.bundleIdentifier) { .string($0) },
            "screencapturekit": true,
        ]
        guard hasWindowServerSession else {
            let error = DesktopError.noWindowServerSession
            return PlatformInfo(
                platform: "macos", capabilities: [], display: nil, extensions: .object(extensions),
                displayError: "\(error.errorDescription ?? "no window server session") (\(error.recoverySuggestion ?? ""))")
        }
        // Only the preflights: a handshake must be quick and never prompt.
        extensions["screen_recording"] = .bool(Permissions.screenRecordingPreflight())
        extensions["accessibility"] = .bool(Permissions.accessibilityTrusted())
        let main = try? DisplayList.current().first(where: \.primary)
        return PlatformInfo(
            platform: "macos", capabilities: Self.capabilities, display: main?.name, extensions: .object(extensions),
            displayError: nil)
    }

    public func displays() async throws -> [Display] {
        try requireSession()
        return try DisplayList.current()
    }

    public func capture(_ request: CaptureRequest) async throws -> CapturedFrame {
        try requireSession()
        return try await capturer.capture(request, displays: DisplayList.current())
    }

    public func recapture(_ rect: Rect, pixelSize: Size, like frame: CapturedFrame) async throws -> PixelBuffer {
        try requireSession()
        return try await capturer.recapture(rect, pixelSize: pixelSize, like: frame)
    }

    public func windows(includeHidden: Bool) async throws -> WindowList {
        try requireSession()
        var catalog = WindowCatalog()
        return catalog.windowList(includeHidden: includeHidden)
    }

    public func window(at point: Point) async throws -> Window? {
        try requireSession()
        var catalog = WindowCatalog()
        return catalog.window(at: point)
    }

    public func readClipboard() async throws -> String {
        try requireSession()
        return try Pasteboard.readText()
    }

    public func writeClipboard(_ text: String) async throws {
        try requireSession()
        try Pasteboard.writeText(text)
    }

    public func hide(_ windows: [WindowID]) async throws -> [WindowID] {
        try requireSession()
        visibility.catalog = WindowCatalog()
        let hidden = try await visibility.hide(windows)
        content.invalidate()
        return hidden
    }

    public func restore(_ windows: [WindowID]) async throws -> [WindowID] {
        try requireSession()
        visibility.catalog = WindowCatalog()
        let restored = try await visibility.restore(windows)
        content.invalidate()
        return restored
    }

    /// Screen Recording counts as granted only when the preflight passes and
    /// a real ScreenCaptureKit call succeeds; Input Monitoring is asked of
    /// IOKit's HID access check. None of them prompts.
    public func permissionStatus() async -> [Permission: Bool] {
        var screenRecording = Permissions.screenRecordingPreflight()
        if screenRecording {
            screenRecording = await content.confirmScreenRecording()
        }
        return [
            .screenRecording: screenRecording,
            .accessibility: Permissions.accessibilityTrusted(),
            .inputMonitoring: Permissions.inputMonitoringGranted(),
        ]
    }

    public func keyLayout() async throws -> JSON {
        try requireSession()
        return try KeyboardLayout.current()
    }

    public func a11yApps() async throws -> JSON {
        try requireSession()
        return accessibility.apps()
    }

    public func a11yTree(_ request: A11yTreeRequest) async throws -> JSON {
        try requireSession()
        return try accessibility.tree(request)
    }

    public func a11yElement(pid: Int32, ref: String) async throws -> JSON {
        try requireSession()
        return try accessibility.element(pid: pid, ref: ref)
    }

    public func a11yAct(pid: Int32, ref: String, _ operation: A11yOperation) async throws {
        try requireSession()
        try accessibility.act(pid: pid, ref: ref, operation)
    }

    public func teachShow(_ request: TeachRequest) async throws -> JSON {
        try requireSession()
        return try overlay.show(request)
    }

    public func teachPoll() async throws -> JSON {
        overlay.poll()
    }

    public func teachHide() async throws {
        overlay.hide()
    }

    public func indicator(visible: Bool) async throws -> JSON {
        guard visible else {
            badge.hide()
            return ["visible": .bool(false), "bounds": .null]
        }
        try requireSession()
        return ["visible": .bool(true), "bounds": TeachOverlay.global(badge.show())]
    }

    public func watchKeyboard(_ onKeyDown: @escaping @MainActor (KeyDown) -> Void) throws {
        try requireSession()
        try keyboard.start(onKeyDown)
    }

    public func permissionDenied(_ permission: Permission) -> ProtocolError {
        switch permission {
        case .screenRecording: return PermissionError.screenRecordingNotGranted.protocolError
        case .accessibility: return PermissionError.accessibilityNotGranted.protocolError
        case .inputMonitoring: return PermissionError.inputMonitoringNotGranted.protocolError
        }
    }
}
