import Foundation

/// Failures of the accessibility methods, each with the protocol code the
/// contract gives it.
public enum AccessibilityError: LocalizedError, ProtocolErrorConvertible {
    case notTrusted
    case noSuchApp(Int32)
    case noSuchWindow(WindowID, pid: Int32)
    case noWindowTitled(String, pid: Int32, titles: [String])
    case noWindows(Int32)
    case foreignRef(String, pid: Int32)
    case stale(String)
    case unsupported(String, String)
    case actionNotExposed(String, exposed: [String])
    case outOfRange(Double, min: Double, max: Double)
    case notResponding(String)
    case failed(String, Int32)

    public var message: String { errorDescription ?? "accessibility error" }

    public var errorDescription: String? {
        switch self {
        case .notTrusted:
            return "macOS has not granted Accessibility to deskhand-helper, so it cannot read other apps' accessibility trees"
        case .noSuchApp(let pid):
            return "no running app has pid \(pid)"
        case .noSuchWindow(let id, let pid):
            return "window \(id) is not an accessible window of pid \(pid)"
        case .noWindowTitled(let title, let pid, let titles):
            return "pid \(pid) has no window titled \(quotedTitle(title)); its windows are \(titles.map(quotedTitle).joined(separator: ", "))"
        case .noWindows(let pid):
            return "pid \(pid) has no accessible window"
        case .foreignRef(let ref, let pid):
            return "ref \(ref) is not an element of pid \(pid)"
        case .stale(let ref):
            return "element \(ref) no longer exists"
        case .unsupported(let ref, let what):
            return "element \(ref) does not support \(what)"
        case .actionNotExposed(let name, let exposed):
            return "the element does not expose the action \(quotedTitle(name)); it exposes \(exposed.isEmpty ? "none" : exposed.map(quotedTitle).joined(separator: ", "))"
        case .outOfRange(let value, let min, let max):
            return "value \(value) is outside the element's range \(min)...\(max)"
        case .notResponding(let what):
            return "the app did not answer in time while \(what)"
        case .failed(let what, let code):
            return "\(what) failed with AXError \(code)"
        }
    }

    public var protocolError: ProtocolError {
        let text = message
        switch self {
        case .notTrusted:
            return ProtocolError(
                .a11yUnavailable, text,
                hint: "Open System Settings > Privacy & Security > Accessibility, switch on deskhand-helper or the app that runs deskhand (such as Terminal), then restart deskhand. `deskhand-helper --request-permissions` opens the pane (\(SettingsPane.accessibility)).")
        case .noSuchApp, .foreignRef:
            return ProtocolError(.invalidParams, text, hint: "Call a11y_apps for the running apps and their pids, and use refs from that app's a11y_tree.")
        case .noSuchWindow, .noWindowTitled, .noWindows:
            return ProtocolError(.noSuchWindow, text, hint: "Call a11y_apps for the app's current windows, or leave window and title out for its active window.")
        case .stale:
            return ProtocolError(.staleElement, text, hint: "Read the tree again (a11y_tree) and use a ref from it.")
        case .unsupported:
            return ProtocolError(.unsupported, text, hint: "Use an op the node's interfaces and actions allow (a11y_tree lists them).")
        case .actionNotExposed(_, let exposed):
            return ProtocolError(.unsupported, text, hint: "Use one of the element's actions.", actions: exposed)
        case .outOfRange:
            return ProtocolError.invalidParams(text)
        case .notResponding:
            return ProtocolError(.unsupported, text, hint: "The app is busy or hung; retry once it responds, or use the coordinate tools.")
        case .failed:
            return ProtocolError.internal(text)
        }
    }
}

func quotedTitle(_ string: String) -> String {
    "\"" + string.replacingOccurrences(of: "\"", with: "\\\"") + "\""
}
