import Foundation

/// One key press a keyboard event tap saw, with the fields that tell
/// deskhand's own presses from the user's.
public struct KeyDown: Equatable, Sendable {
    /// The Mac virtual key code (`kVK_Escape` is 0x35).
    public var keyCode: Int64
    /// The event's `eventSourceUserData` field.
    public var sourceUserData: Int64
    /// The event's `eventSourceUnixProcessID` field: the process that
    /// posted it (0 for the keyboard itself).
    public var sourcePID: Int64

    public init(keyCode: Int64, sourceUserData: Int64, sourcePID: Int64) {
        self.keyCode = keyCode
        self.sourceUserData = sourceUserData
        self.sourcePID = sourcePID
    }
}

/// The rule of the Escape watch (helpers/PROTOCOL.md, `watch_escape`): the
/// user's Escape stops deskhand's turn, and deskhand's own Escape (a model
/// pressing Escape in a dialog) must not.
public enum EscapeWatch {
    /// `kVK_Escape`.
    public static let escapeKeyCode: Int64 = 0x35
    /// What every event deskhand's Quartz input posts carries in
    /// `eventSourceUserData` (supervisor/desktop/keycodes/quartz_darwin.go
    /// SyntheticMarker; the teaching overlay checks the same value).
    public static let syntheticMarker: Int64 = 0x6473_6b68_616e_6401
    /// The notification the helper sends for the user's Escape.
    public static let notification = "escape_pressed"

    /// Whether `key` is the user's Escape: the Escape key, without the
    /// marker deskhand's input puts on every event, and not posted by one
    /// of `ownPIDs` (the supervisor, which posts in process, and the helper).
    /// Two independent checks, as the teaching overlay makes: a marker lost
    /// on the way (a tap that rewrites events) still does not let deskhand's
    /// own Escape end the turn.
    public static func isUsersEscape(_ key: KeyDown, ownPIDs: [Int64]) -> Bool {
        key.keyCode == escapeKeyCode && key.sourceUserData != syntheticMarker && !ownPIDs.contains(key.sourcePID)
    }

    /// The processes whose events are deskhand's own: the helper's parent
    /// (the supervisor) and the helper.
    public static var ownPIDs: [Int64] {
        [Int64(getppid()), Int64(getpid())]
    }

    /// The `escape_pressed` notification, framed.
    public static func notificationFrame(_ key: KeyDown) -> [UInt8] {
        let body: JSON = [
            "jsonrpc": "2.0", "method": .string(notification),
            "params": ["key_code": .int(key.keyCode), "source_pid": .int(key.sourcePID)],
        ]
        return encodeFrame(body.serialized())
    }
}
