import Foundation

/// Log lines on stderr, one per line, starting with the level word
/// (PROTOCOL.md: stdout carries protocol only).
public struct Log: Sendable {
    public enum Level: Int, Comparable, Sendable {
        case debug, info, warn, error

        var word: String {
            switch self {
            case .debug: return "DEBUG"
            case .info: return "INFO"
            case .warn: return "WARN"
            case .error: return "ERROR"
            }
        }

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    public let threshold: Level
    private let sink: @Sendable (String) -> Void

    /// A log that writes lines at `threshold` and above to `sink`.
    public init(threshold: Level, sink: @escaping @Sendable (String) -> Void) {
        self.threshold = threshold
        self.sink = sink
    }

    /// The level from `DESKHAND_HELPER_LOG` (debug, info, warn, error;
    /// info when unset or unknown), written to stderr.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> Log {
        let level: Level
        switch environment["DESKHAND_HELPER_LOG"]?.lowercased() {
        case "debug": level = .debug
        case "warn": level = .warn
        case "error": level = .error
        default: level = .info
        }
        // FileHandle, not the C global `stderr`, which Swift 6 refuses to
        // share between threads; each line is still one write.
        return Log(threshold: level) { line in
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    /// A log that drops everything.
    public static let discard = Log(threshold: .error) { _ in }

    public func log(_ level: Level, _ message: @autoclosure () -> String) {
        guard level >= threshold else { return }
        // One write per line, newlines inside the message flattened, so a
        // reader can always split the stream on "\n".
        let text = message().replacingOccurrences(of: "\n", with: " ")
        sink("\(level.word) \(text)\n")
    }

    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func warn(_ message: @autoclosure () -> String) { log(.warn, message()) }
    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
}
