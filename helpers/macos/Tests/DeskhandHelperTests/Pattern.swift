import DeskhandHelperCore
import Foundation

/// The transcript pattern language (helpers/testdata/transcripts/README.md,
/// "Patterns"), the same matcher the Linux helper's runner implements.
enum Pattern {
    /// Nil when `actual` matches `pattern`, else why not, with the JSON
    /// path of the first mismatch.
    static func mismatch(_ pattern: JSON, _ actual: JSON, path: String = "$") -> String? {
        func fail(_ want: String) -> String {
            "\(path): want \(want), got \(shorten(actual))"
        }
        switch pattern {
        case .string(let text) where text.hasPrefix("$$"):
            let literal = String(text.dropFirst())
            return actual == .string(literal) ? nil : fail(quotedJSON(literal))
        case .string(let matcher) where matcher.hasPrefix("$"):
            let ok: Bool
            switch matcher {
            case "$int": ok = actual.intValue != nil
            case "$number": ok = isNumber(actual)
            case "$string": ok = actual.stringValue != nil
            case "$bool": ok = isBool(actual)
            case "$null": ok = actual.isNull
            case "$any": ok = true
            case "$object": ok = actual.objectValue != nil
            case "$array": ok = actual.arrayValue != nil
            case "$int_or_null": ok = actual.isNull || actual.intValue != nil
            case "$string_or_null": ok = actual.isNull || actual.stringValue != nil
            case "$object_or_null": ok = actual.isNull || actual.objectValue != nil
            case "$base64": ok = actual.stringValue.map(isBase64) ?? false
            default: return "\(path): unknown matcher \(quotedJSON(matcher)) in the pattern"
            }
            return ok ? nil : fail(matcher)
        case .object(let expected) where expected.count == 1 && expected["$each"] != nil:
            guard let items = actual.arrayValue else { return fail("an array") }
            for (index, item) in items.enumerated() {
                if let why = mismatch(expected["$each"] ?? .null, item, path: "\(path)[\(index)]") {
                    return why
                }
            }
            return nil
        case .object(let expected):
            guard let object = actual.objectValue else { return fail("an object") }
            for (key, sub) in expected.members {
                guard let value = object[key] else {
                    return "\(path): missing key \(quotedJSON(key)) in \(shorten(actual))"
                }
                if let why = mismatch(sub, value, path: "\(path).\(key)") {
                    return why
                }
            }
            return nil
        case .array(let expected):
            guard let items = actual.arrayValue else { return fail("an array") }
            guard items.count == expected.count else { return fail("an array of \(expected.count) items") }
            for (index, (sub, item)) in zip(expected, items).enumerated() {
                if let why = mismatch(sub, item, path: "\(path)[\(index)]") {
                    return why
                }
            }
            return nil
        case .int, .double:
            guard let want = number(pattern), let got = number(actual), want == got else {
                return fail(pattern.serializedString())
            }
            return nil
        default:
            return pattern == actual ? nil : fail(pattern.serializedString())
        }
    }

    private static func number(_ value: JSON) -> Double? {
        switch value {
        case .int(let int): return Double(int)
        case .double(let double): return double
        default: return nil
        }
    }

    private static func isNumber(_ value: JSON) -> Bool { number(value) != nil }

    private static func isBool(_ value: JSON) -> Bool {
        if case .bool = value { return true }
        return false
    }

    /// Non-empty standard base64 with padding.
    static func isBase64(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count % 4 == 0 && Data(base64Encoded: text) != nil
    }

    private static func quotedJSON(_ text: String) -> String {
        JSON.string(text).serializedString()
    }

    /// A JSON value cut to a readable length for failure messages.
    static func shorten(_ value: JSON) -> String {
        let text = value.serializedString()
        return text.count > 300 ? String(text.prefix(300)) + "…" : text
    }
}
