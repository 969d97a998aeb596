import Foundation

/// The stable error codes of the helper protocol (helpers/PROTOCOL.md,
/// "Errors"): the raw value is `error.data.code`, `number` the JSON-RPC code.
public enum ErrorCode: String, CaseIterable, Sendable {
    case parseError = "parse_error"
    case invalidRequest = "invalid_request"
    case methodNotFound = "method_not_found"
    case invalidParams = "invalid_params"
    case `internal` = "internal"
    case displayUnavailable = "display_unavailable"
    case outOfBounds = "out_of_bounds"
    case noSuchDisplay = "no_such_display"
    case noSuchWindow = "no_such_window"
    case noCapture = "no_capture"
    case clipboardUnavailable = "clipboard_unavailable"
    case unsupported = "unsupported"
    case handshakeRequired = "handshake_required"
    case incompatibleProtocol = "incompatible_protocol"
    case captureFailed = "capture_failed"
    case permissionDenied = "permission_denied"
    case a11yUnavailable = "a11y_unavailable"
    case staleElement = "stale_element"

    public var number: Int {
        switch self {
        case .parseError: return -32700
        case .invalidRequest: return -32600
        case .methodNotFound: return -32601
        case .invalidParams: return -32602
        case .internal: return -32603
        case .displayUnavailable: return -32001
        case .outOfBounds: return -32002
        case .noSuchDisplay: return -32003
        case .noSuchWindow: return -32004
        case .noCapture: return -32005
        case .clipboardUnavailable: return -32006
        case .unsupported: return -32007
        case .handshakeRequired: return -32008
        case .incompatibleProtocol: return -32009
        case .captureFailed: return -32010
        case .permissionDenied: return -32011
        case .a11yUnavailable: return -32012
        case .staleElement: return -32013
        }
    }
}

/// An error as the protocol sends it: a stable code, a message saying what
/// went wrong, and a hint saying what to do about it.
public struct ProtocolError: LocalizedError, Equatable, Sendable {
    public let code: ErrorCode
    public let message: String
    public let hint: String
    /// `data.actions`: the actions an element exposes, on an `unsupported`
    /// a11y_act action, so the caller can pick one without another read.
    public var actions: [String]?

    public init(_ code: ErrorCode, _ message: String, hint: String, actions: [String]? = nil) {
        self.code = code
        self.message = message
        self.hint = hint
        self.actions = actions
    }

    public var errorDescription: String? { message }
    public var recoverySuggestion: String? { hint }

    /// The JSON-RPC error object.
    public var json: JSON {
        var data: JSONObject = ["code": .string(code.rawValue), "hint": .string(hint)]
        if let actions {
            data["actions"] = .array(actions.map { .string($0) })
        }
        return [
            "code": JSON(code.number),
            "message": .string(message),
            "data": .object(data),
        ]
    }

    public static func invalidParams(_ message: String) -> ProtocolError {
        ProtocolError(
            .invalidParams, message,
            hint: "Fix the request parameters; see helpers/PROTOCOL.md for each method's params.")
    }

    public static func `internal`(_ message: String) -> ProtocolError {
        ProtocolError(
            .internal, message,
            hint: "This is a bug in deskhand-helper; please report it with the helper's stderr log.")
    }

    public static func methodNotFound(_ method: String) -> ProtocolError {
        ProtocolError(
            .methodNotFound, "unknown method \(quoted(method))",
            hint: "Check the method name against helpers/PROTOCOL.md and the handshake's capabilities.")
    }

    public static func outOfBounds(_ message: String, hint: String) -> ProtocolError {
        ProtocolError(.outOfBounds, message, hint: hint)
    }

    public static func captureFailed(_ message: String) -> ProtocolError {
        ProtocolError(
            .captureFailed, message,
            hint: "Retry the capture; if it keeps failing, read the helper's stderr log.")
    }
}

/// A typed error that knows how the protocol reports it. The macOS layer's
/// LocalizedError enums conform, so the request handler never has to guess.
public protocol ProtocolErrorConvertible: Error {
    var protocolError: ProtocolError { get }
}

extension ProtocolError: ProtocolErrorConvertible {
    public var protocolError: ProtocolError { self }
}

extension ProtocolError {
    /// Any error as the protocol reports it: typed errors keep their code;
    /// anything else is a bug, reported as `internal` with its description.
    public init(from error: Error, during what: String) {
        if let convertible = error as? ProtocolErrorConvertible {
            self = convertible.protocolError
        } else {
            self = .internal("\(what): \(error.localizedDescription)")
        }
    }
}

/// A string in double quotes with quotes and backslashes escaped, the way
/// messages show user-supplied names.
func quoted(_ string: String) -> String {
    "\"" + string.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
}
