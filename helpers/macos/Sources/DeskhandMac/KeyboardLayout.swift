import Carbon.HIToolbox
import DeskhandHelperCore
import Foundation

/// `key_layout`: what each key of the active keyboard layout types, read
/// with Text Input Sources and UCKeyTranslate.
///
/// The supervisor sends shortcuts (Cmd-A) as key codes, because macOS
/// matches them by key, and it must send the key that means "A" on the
/// layout the user has, not the US one (on AZERTY the US "A" key is Q, and
/// Cmd-A would quit the app). It also checks the chord it sends against the
/// system-shortcut list by what the layout makes of that key. So the facts
/// come from here, the one place that can read them: HIToolbox's input
/// source calls trap unless they run on the main thread, which the helper's
/// main actor is, and the supervisor's input thread is not.
///
/// Four layers are read for each key code 0...127: no modifier, Shift,
/// Command and Command-Shift. Command has its own layer because layouts
/// such as "Dvorak - QWERTY ⌘" and the non-Latin ones give Command a
/// QWERTY table; Option and Control are not read, since macOS matches
/// shortcuts by the character the key types without them.
@MainActor
enum KeyboardLayout {
    static func current() throws -> JSON {
        // The keyboard layout, not an input method: an IME (Japanese,
        // Chinese) is driven by a layout whose keys are what shortcuts use.
        guard
            let source = TISCopyCurrentKeyboardLayoutInputSource()?.takeRetainedValue()
                ?? TISCopyCurrentASCIICapableKeyboardLayoutInputSource()?.takeRetainedValue()
        else {
            throw KeyLayoutError.noLayout
        }
        guard let rawData = TISGetInputSourceProperty(source, kTISPropertyUnicodeKeyLayoutData) else {
            throw KeyLayoutError.noUnicodeData(property(source, kTISPropertyInputSourceID) ?? "?")
        }
        let data = Unmanaged<CFData>.fromOpaque(rawData).takeUnretainedValue() as Data
        let keyboardType = UInt32(LMGetKbdType())
        let layers: [(name: String, modifiers: Int)] = [
            ("base", 0), ("shift", shiftKey), ("command", cmdKey), ("command_shift", cmdKey | shiftKey),
        ]
        var keys: [JSON] = []
        data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            guard let base = buffer.baseAddress else { return }
            let layout = base.assumingMemoryBound(to: UCKeyboardLayout.self)
            for code in 0..<128 {
                var entry: JSONObject = ["code": JSON(code)]
                var typesSomething = false
                for layer in layers {
                    let text = translate(layout, code: UInt16(code), modifiers: layer.modifiers, keyboardType: keyboardType)
                    entry[layer.name] = .string(text)
                    typesSomething = typesSomething || !text.isEmpty
                }
                if typesSomething {
                    keys.append(.object(entry))
                }
            }
        }
        return [
            "source": .string(property(source, kTISPropertyInputSourceID) ?? ""),
            "name": .string(property(source, kTISPropertyLocalizedName) ?? ""),
            "keys": .array(keys),
        ]
    }

    /// What the key types with the modifiers (Carbon modifier bits), with
    /// dead keys reporting their own character instead of waiting for the
    /// next key. Control characters and failures are "".
    private static func translate(
        _ layout: UnsafePointer<UCKeyboardLayout>, code: UInt16, modifiers: Int, keyboardType: UInt32
    ) -> String {
        var deadKeyState: UInt32 = 0
        var length = 0
        var characters = [UniChar](repeating: 0, count: 8)
        let status = UCKeyTranslate(
            layout, code, UInt16(kUCKeyActionDown), UInt32((modifiers >> 8) & 0xFF), keyboardType,
            OptionBits(kUCKeyTranslateNoDeadKeysMask), &deadKeyState, characters.count, &length, &characters)
        guard status == noErr, length > 0 else { return "" }
        let text = String(utf16CodeUnits: characters, count: length)
        if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return ""
        }
        return text
    }

    private static func property(_ source: TISInputSource, _ key: CFString) -> String? {
        guard let raw = TISGetInputSourceProperty(source, key) else { return nil }
        return Unmanaged<CFString>.fromOpaque(raw).takeUnretainedValue() as String
    }
}

/// The active keyboard layout could not be read.
enum KeyLayoutError: LocalizedError, ProtocolErrorConvertible {
    case noLayout
    case noUnicodeData(String)

    var errorDescription: String? {
        switch self {
        case .noLayout:
            return "macOS reports no active keyboard layout"
        case .noUnicodeData(let id):
            return "the keyboard layout \(id) has no Unicode key table (uchr), so its keys cannot be read"
        }
    }

    var protocolError: ProtocolError {
        ProtocolError(
            .unsupported, errorDescription ?? "no keyboard layout",
            hint: "Select a keyboard layout in System Settings > Keyboard > Input Sources (any standard layout has a key table), then retry.")
    }
}
