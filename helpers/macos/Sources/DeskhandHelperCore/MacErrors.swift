import Foundation

/// System Settings panes, by the URL that opens each one.
public enum SettingsPane {
    public static let screenRecording = "x-apple.systempreferences:com.apple.preference.security?Privacy_ScreenCapture"
    public static let accessibility = "x-apple.systempreferences:com.apple.preference.security?Privacy_Accessibility"
    public static let inputMonitoring = "x-apple.systempreferences:com.apple.preference.security?Privacy_ListenEvent"
}

/// A macOS privacy permission (TCC) is missing. The hint names the pane in
/// System Settings, because only the user can grant it and the helper never
/// shows the system prompt on its own.
public enum PermissionError: LocalizedError, ProtocolErrorConvertible, Equatable {
    /// CGPreflightScreenCaptureAccess says Screen Recording is not granted.
    case screenRecordingNotGranted
    /// The preflight said yes but ScreenCaptureKit refused: the grant was
    /// revoked, or belongs to another copy of the helper.
    case screenRecordingRefused(String)
    /// AXIsProcessTrusted says Accessibility is not granted.
    case accessibilityNotGranted
    /// Input Monitoring is not granted (`permissions`), or macOS refused
    /// the keyboard event tap of `watch_escape`: neither Input Monitoring
    /// nor Accessibility is granted.
    case inputMonitoringNotGranted

    public var errorDescription: String? {
        switch self {
        case .screenRecordingNotGranted:
            return "macOS has not granted Screen Recording to deskhand-helper, so it cannot read the screen"
        case .screenRecordingRefused(let reason):
            return "ScreenCaptureKit refused to capture (\(reason)) although the Screen Recording preflight passed"
        case .accessibilityNotGranted:
            return "macOS has not granted Accessibility to deskhand-helper"
        case .inputMonitoringNotGranted:
            return "macOS has not granted Input Monitoring to deskhand-helper (it refuses the keyboard event tap), so the user's Escape cannot stop deskhand; everything else works without it"
        }
    }

    public var recoverySuggestion: String? {
        switch self {
        case .screenRecordingNotGranted, .screenRecordingRefused:
            return "Open System Settings > Privacy & Security > Screen Recording (macOS 15 and later: Screen & System Audio Recording), switch on deskhand-helper or the app that runs deskhand (such as Terminal), then restart deskhand. `deskhand-helper --request-permissions` opens the pane (\(SettingsPane.screenRecording))."
        case .accessibilityNotGranted:
            return "Open System Settings > Privacy & Security > Accessibility, switch on deskhand-helper or the app that runs deskhand (such as Terminal), then restart deskhand. `deskhand-helper --request-permissions` opens the pane (\(SettingsPane.accessibility))."
        case .inputMonitoringNotGranted:
            return "Open System Settings > Privacy & Security > Input Monitoring (\(SettingsPane.inputMonitoring)), switch on deskhand-helper or the app that runs deskhand (such as Terminal), then restart deskhand."
        }
    }

    public var protocolError: ProtocolError {
        ProtocolError(.permissionDenied, errorDescription ?? "permission denied", hint: recoverySuggestion ?? "")
    }
}

/// Failures of the macOS desktop, each mapped to the protocol code that
/// names it.
public enum DesktopError: LocalizedError, ProtocolErrorConvertible {
    /// No window server session: the helper runs outside a logged-in GUI
    /// session (over ssh, or as a daemon).
    case noWindowServerSession
    case noDisplays
    case noSuchDisplay(DisplayID, known: [Display])
    case rectOutsideScreen(Rect, displays: [Display])
    case rectSpansDisplays(Rect, displays: [Display])
    case noSuchWindows([WindowID])
    case displayNotShareable(DisplayID)
    case captureFailed(String)
    case clipboardEmpty
    case clipboardWriteFailed
    case encodingFailed(String)

    public var errorDescription: String? {
        switch self {
        case .noWindowServerSession:
            return "deskhand-helper has no window server session (it is not running inside a logged-in macOS desktop session)"
        case .noDisplays:
            return "macOS reports no active display"
        case .noSuchDisplay(let id, let known):
            return "no display has id \(id); the displays are \(known.map { "\($0.id) (\($0.name))" }.joined(separator: ", "))"
        case .rectOutsideScreen(let rect, let displays):
            return "rectangle \(rect) is outside the screen (displays: \(Self.describe(displays)))"
        case .rectSpansDisplays(let rect, let displays):
            return "rectangle \(rect) is not inside one display (displays: \(Self.describe(displays)))"
        case .noSuchWindows(let ids):
            return "no window has id \(ids.map { String($0) }.joined(separator: ", "))"
        case .displayNotShareable(let id):
            return "ScreenCaptureKit does not offer display \(id) for capture"
        case .captureFailed(let reason):
            return "ScreenCaptureKit could not capture: \(reason)"
        case .clipboardEmpty:
            return "the pasteboard holds no text"
        case .clipboardWriteFailed:
            return "the pasteboard refused the text"
        case .encodingFailed(let reason):
            return "encoding the image failed: \(reason)"
        }
    }

    public var recoverySuggestion: String? {
        switch self {
        case .noWindowServerSession:
            return "Run deskhand from a process inside the user's desktop session (Terminal, or an app such as Claude Desktop), not over ssh or as a launch daemon."
        case .noDisplays:
            return "Wake the display or connect one, then retry."
        case .noSuchDisplay:
            return "Call displays for the current ids; monitors may have been unplugged or rearranged."
        case .rectOutsideScreen:
            return "Use a rectangle inside the screen; call displays for the geometry."
        case .rectSpansDisplays:
            return "A rectangle must lie inside one display; capture each display's part separately (call displays for the geometry)."
        case .noSuchWindows:
            return "Call windows for the current ids; the window may have closed."
        case .displayNotShareable:
            return "Call displays again; the display may have just been disconnected."
        case .captureFailed:
            return "Retry the capture; if it keeps failing, read the helper's stderr log."
        case .clipboardEmpty:
            return "Copy some text first; the pasteboard is empty or holds only non-text data."
        case .clipboardWriteFailed:
            return "Retry; another application may be holding the pasteboard."
        case .encodingFailed:
            return "Retry with a different format or output size; if it keeps failing, report a bug with the helper's stderr log."
        }
    }

    public var protocolError: ProtocolError {
        let code: ErrorCode
        switch self {
        case .noWindowServerSession, .noDisplays: code = .displayUnavailable
        case .noSuchDisplay: code = .noSuchDisplay
        case .rectOutsideScreen, .rectSpansDisplays: code = .outOfBounds
        case .noSuchWindows: code = .noSuchWindow
        case .displayNotShareable, .captureFailed: code = .captureFailed
        case .clipboardEmpty, .clipboardWriteFailed: code = .clipboardUnavailable
        case .encodingFailed: code = .internal
        }
        return ProtocolError(code, errorDescription ?? "desktop error", hint: recoverySuggestion ?? "")
    }

    private static func describe(_ displays: [Display]) -> String {
        displays.map { "\($0.name) \($0.bounds)" }.joined(separator: ", ")
    }
}
