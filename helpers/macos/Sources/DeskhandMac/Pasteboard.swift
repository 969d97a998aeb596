import AppKit
import DeskhandHelperCore
import Foundation

/// Text on the general pasteboard. Unlike an X11 selection, the pasteboard
/// server keeps what was written after the helper exits.
@MainActor
enum Pasteboard {
    static func readText() throws -> String {
        guard let text = NSPasteboard.general.string(forType: .string) else {
            throw DesktopError.clipboardEmpty
        }
        return text
    }

    static func writeText(_ text: String) throws {
        let pasteboard = NSPasteboard.general
        pasteboard.clearContents()
        guard pasteboard.setString(text, forType: .string) else {
            throw DesktopError.clipboardWriteFailed
        }
    }
}
