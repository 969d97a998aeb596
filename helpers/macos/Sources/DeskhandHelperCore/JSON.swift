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
    /// Foundation's parser does the reading; the result is converted so that
    /// numbers keep their integer-or-float nature and booleans stay booleans.
    public static func parse(_ bytes: [UInt8]) throws -> JSON {
        if bytes.isEmpty {
            throw JSONParseError(reason: "the body is empty")
        }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
        } catch {
            let nsError = error as NSError
            let detail = nsError.userInfo[NSDebugDescriptionErrorKey] as? String ?? nsError.localizedDescription
            throw JSONParseError(reason: detail)
        }
        return try JSON(foundation: object)
    }

    public static func parse(_ text: String) throws -> JSON {
        try parse(Array(text.utf8))
    }

    init(foundation value: Any) throws {
        switch value {
        case is NSNull:
            self = .null
        case let decimal as NSDecimalNumber:
            self = .double(decimal.doubleValue)
        case let number as NSNumber:
            if CFGetTypeID(number) == CFBooleanGetTypeID() {
                self = .bool(number.boolValue)
            } else if CFNumberIsFloatType(number as CFNumber) {
                self = .double(number.doubleValue)
            } else if number.int64Value < 0 || number.uint64Value <= UInt64(Int64.max) {
                self = .int(number.int64Value)
            } else {
                // Above Int64.max: no protocol field takes such a number.
                self = .double(number.doubleValue)
            }
        case let string as String:
            self = .string(string)
        case let array as [Any]:
            self = .array(try array.map { try JSON(foundation: $0) })
        case let dictionary as [String: Any]:
            var object = JSONObject()
            for key in dictionary.keys.sorted() {
                object[key] = try JSON(foundation: dictionary[key] as Any)
            }
            self = .object(object)
        default:
            throw JSONParseError(reason: "unexpected value of type \(type(of: value)) from the JSON parser")
        }
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
