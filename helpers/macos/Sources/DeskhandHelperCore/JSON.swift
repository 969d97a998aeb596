import Foundation

/// A JSON value that keeps what the protocol cares about and Foundation's
/// `Any` blurs: integers apart from floats (`80.5` is not a quality),
/// booleans apart from numbers (`1` is not `true`), and the order of an
/// object's members when the helper writes one.
public enum JSON: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object(JSONObject)
}

/// An object whose members keep their insertion order when written.
/// Equality ignores the order, as JSON does.
public struct JSONObject: Equatable, Sendable {
    public private(set) var keys: [String] = []
    private var storage: [String: JSON] = [:]

    public init() {}

    public subscript(key: String) -> JSON? {
        get { storage[key] }
        set {
            if let newValue {
                if storage.updateValue(newValue, forKey: key) == nil {
                    keys.append(key)
                }
            } else if storage.removeValue(forKey: key) != nil {
                keys.removeAll { $0 == key }
            }
        }
    }

    public var count: Int { keys.count }

    /// The members in order.
    public var members: [(key: String, value: JSON)] {
        keys.compactMap { key in storage[key].map { (key: key, value: $0) } }
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.storage == rhs.storage
    }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, JSON)...) {
        for (key, value) in elements {
            self[key] = value
        }
    }
}

extension JSON: ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSON)...) {
        var object = JSONObject()
        for (key, value) in elements {
            object[key] = value
        }
        self = .object(object)
    }
}

// MARK: - Convenience constructors and accessors

extension JSON {
    public init(_ value: Int) { self = .int(Int64(value)) }
    public init(_ value: UInt32) { self = .int(Int64(value)) }
    public init(_ value: UInt64) { self = value <= UInt64(Int64.max) ? .int(Int64(value)) : .double(Double(value)) }

    /// `value` as JSON, or `null` when it is nil.
    public static func optional<T>(_ value: T?, _ transform: (T) -> JSON) -> JSON {
        value.map(transform) ?? .null
    }

    public var objectValue: JSONObject? {
        if case .object(let object) = self { return object }
        return nil
    }

    public var arrayValue: [JSON]? {
        if case .array(let array) = self { return array }
        return nil
    }

    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    /// The value as an integer: an `.int`, never a float, even a whole one
    /// (as serde_json's `as_i64` does on the Linux side).
    public var intValue: Int64? {
        if case .int(let int) = self { return int }
        return nil
    }

    public var isNull: Bool { self == .null }

    public subscript(key: String) -> JSON? {
        objectValue?[key]
    }

    /// The JSON type name, for error messages: "a string", "an array", ...
    public var kind: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .int, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

// MARK: - Parsing

/// Why bytes could not be read as JSON.
public struct JSONParseError: LocalizedError, Equatable {
    public let reason: String
    public var errorDescription: String? { reason }
}

extension JSON {
    /// Parses one JSON text (any value at the top level, as RFC 8259 allows).
    /// The parser is ours rather than Foundation's: Apple's and the open
    /// source Foundation disagree on how a number says it is a boolean or a
    /// float, so reading the text itself is the one way both platforms give
    /// the same value. A number is an integer when it has no fraction and
    /// no exponent and fits in Int64; any other number is a Double.
    public static func parse(_ bytes: [UInt8]) throws -> JSON {
        if bytes.isEmpty {
            throw JSONParseError(reason: "the body is empty")
        }
        var reader = JSONReader(bytes: bytes)
        let value = try reader.value(depth: 0)
        reader.skipSpace()
        if reader.index != bytes.count {
            throw reader.failure("unexpected text after the JSON value")
        }
        return value
    }

    public static func parse(_ text: String) throws -> JSON {
        try parse(Array(text.utf8))
    }
}

/// A recursive-descent reader of RFC 8259 JSON over UTF-8 bytes.
struct JSONReader {
    let bytes: [UInt8]
    var index = 0

    /// Deeper nesting than this is refused rather than risking the stack.
    static let maxDepth = 512

    init(bytes: [UInt8]) { self.bytes = bytes }

    func failure(_ reason: String) -> JSONParseError {
        JSONParseError(reason: "\(reason) at byte \(index)")
    }

    mutating func skipSpace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) {
            index += 1
        }
    }

    mutating func expect(_ literal: String, _ value: JSON) throws -> JSON {
        let word = Array(literal.utf8)
        guard index + word.count <= bytes.count, Array(bytes[index..<index + word.count]) == word else {
            throw failure("invalid literal")
        }
        index += word.count
        return value
    }

    mutating func value(depth: Int) throws -> JSON {
        guard depth < JSONReader.maxDepth else { throw failure("nesting too deep") }
        skipSpace()
        guard index < bytes.count else { throw failure("unexpected end of the text") }
        switch bytes[index] {
        case UInt8(ascii: "n"): return try expect("null", .null)
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw failure("unexpected character")
        }
    }

    mutating func array(depth: Int) throws -> JSON {
        index += 1
        var items: [JSON] = []
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            items.append(try value(depth: depth + 1))
            skipSpace()
            guard index < bytes.count else { throw failure("unterminated array") }
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "]") { return .array(items) }
            if byte != UInt8(ascii: ",") { throw failure("expected , or ] in an array") }
        }
    }

    mutating func object(depth: Int) throws -> JSON {
        index += 1
        var object = JSONObject()
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(object)
        }
        while true {
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw failure("expected a member name")
            }
            let key = try string()
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure("expected :") }
            index += 1
            object[key] = try value(depth: depth + 1)
            skipSpace()
            guard index < bytes.count else { throw failure("unterminated object") }
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "}") { return .object(object) }
            if byte != UInt8(ascii: ",") { throw failure("expected , or } in an object") }
        }
    }

    mutating func number() throws -> JSON {
        let start = index
        var integral = true
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        let digitsStart = index
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        let intDigits = index - digitsStart
        guard intDigits > 0, !(intDigits > 1 && bytes[digitsStart] == UInt8(ascii: "0")) else {
            throw failure("invalid number")
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            integral = false
            index += 1
            let fraction = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > fraction else { throw failure("invalid number") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            integral = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            let exponent = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > exponent else { throw failure("invalid number") }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        // An integer beyond Int64 becomes a Double, never a wrapped value:
        // no protocol field takes one, and the parameter checks refuse a
        // Double where an integer is needed.
        if integral, let int = Int64(text) {
            return .int(int)
        }
        guard let double = Double(text), double.isFinite else { throw failure("number out of range") }
        return .double(double)
    }

    mutating func string() throws -> String {
        index += 1
        var out: [UInt8] = []
        while true {
            guard index < bytes.count else { throw failure("unterminated string") }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(bytes: out, encoding: .utf8) else {
                    throw failure("a string that is not UTF-8")
                }
                return text
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { throw failure("unterminated string") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"): out.append(contentsOf: try unicodeEscape())
                default: throw failure("invalid escape")
                }
            case 0x00..<0x20:
                throw failure("a control character in a string")
            default:
                out.append(byte)
            }
        }
    }

    /// The UTF-8 bytes of a \u escape, joining a surrogate pair.
    mutating func unicodeEscape() throws -> [UInt8] {
        var scalar = try hex4()
        if (0xD800..<0xDC00).contains(scalar) {
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw failure("a lone surrogate")
            }
            index += 2
            let low = try hex4()
            guard (0xDC00..<0xE000).contains(low) else { throw failure("a lone surrogate") }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw failure("a lone surrogate") }
        return Array(String(Character(unicode)).utf8)
    }

    mutating func hex4() throws -> UInt32 {
        guard index + 4 <= bytes.count,
            let value = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
        else { throw failure("invalid \\u escape") }
        index += 4
        return value
    }
}

// MARK: - Writing

extension JSON {
    /// The compact UTF-8 encoding of the value.
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(estimatedSize)
        write(to: &out)
        return out
    }

    public func serializedString() -> String {
        String(decoding: serialized(), as: UTF8.self)
    }

    /// A cheap guess of the encoded size, dominated by long strings (the
    /// base64 image), so the output buffer is allocated once.
    private var estimatedSize: Int {
        switch self {
        case .string(let s): return s.utf8.count + 2
        case .array(let items): return items.reduce(2) { $0 + $1.estimatedSize + 1 }
        case .object(let object): return object.members.reduce(2) { $0 + $1.key.utf8.count + $1.value.estimatedSize + 4 }
        default: return 24
        }
    }

    func write(to out: inout [UInt8]) {
        switch self {
        case .null:
            out.append(contentsOf: "null".utf8)
        case .bool(let value):
            out.append(contentsOf: (value ? "true" : "false").utf8)
        case .int(let value):
            out.append(contentsOf: String(value).utf8)
        case .double(let value):
            if value.isFinite {
                out.append(contentsOf: "\(value)".utf8)
            } else {
                out.append(contentsOf: "null".utf8)
            }
        case .string(let value):
            JSON.writeString(value, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                item.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            for (index, member) in object.members.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSON.writeString(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                member.value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    static func writeString(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""):
                out.append(UInt8(ascii: "\\"))
                out.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"):
                out.append(UInt8(ascii: "\\"))
                out.append(UInt8(ascii: "\\"))
            case 0x0A:
                out.append(UInt8(ascii: "\\"))
                out.append(UInt8(ascii: "n"))
            case 0x0D:
                out.append(UInt8(ascii: "\\"))
                out.append(UInt8(ascii: "r"))
            case 0x09:
                out.append(UInt8(ascii: "\\"))
                out.append(UInt8(ascii: "t"))
            case 0x00..<0x20:
                out.append(contentsOf: "\\u00".utf8)
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            default:
                // Bytes of multi-byte UTF-8 sequences pass through as they are.
                out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
