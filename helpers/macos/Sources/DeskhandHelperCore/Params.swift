import Foundation

/// Typed access to a request's params with messages that name the field.
/// Absent and null members are the same; unknown members are ignored.
struct Params {
    let method: String
    private let object: JSONObject

    init(method: String, params: JSON) throws {
        self.method = method
        switch params {
        case .null:
            object = JSONObject()
        case .object(let members):
            object = members
        default:
            throw ProtocolError.invalidParams("\(method): params must be an object, not \(params.kind)")
        }
    }

    func bad(_ what: String) -> ProtocolError {
        .invalidParams("\(method): \(what)")
    }

    func value(_ name: String) -> JSON? {
        guard let value = object[name], !value.isNull else { return nil }
        return value
    }

    func int(_ name: String, in range: ClosedRange<Int64>) throws -> Int? {
        guard let value = value(name) else { return nil }
        guard let int = value.intValue, range.contains(int) else {
            throw bad("\"\(name)\" must be an integer in \(range.lowerBound)...\(range.upperBound), got \(value.serializedString())")
        }
        return Int(int)
    }

    func requiredInt(_ name: String, in range: ClosedRange<Int64>) throws -> Int {
        guard let int = try int(name, in: range) else {
            throw bad("\"\(name)\" is required (an integer in \(range.lowerBound)...\(range.upperBound))")
        }
        return int
    }

    /// A coordinate: any 32-bit signed integer.
    func requiredCoordinate(_ name: String) throws -> Int {
        try requiredInt(name, in: Int64(Int32.min)...Int64(Int32.max))
    }

    func bool(_ name: String) throws -> Bool? {
        guard let value = value(name) else { return nil }
        guard case .bool(let bool) = value else {
            throw bad("\"\(name)\" must be true or false, got \(value.serializedString())")
        }
        return bool
    }

    func string(_ name: String) throws -> String? {
        guard let value = value(name) else { return nil }
        guard let string = value.stringValue else {
            throw bad("\"\(name)\" must be a string, got \(value.kind)")
        }
        return string
    }

    func requiredString(_ name: String) throws -> String {
        guard let string = try string(name) else {
            throw bad("\"\(name)\" is required (a string)")
        }
        return string
    }

    /// An array of non-empty strings.
    func strings(_ name: String) throws -> [String]? {
        guard let value = value(name) else { return nil }
        guard let items = value.arrayValue else {
            throw bad("\"\(name)\" must be an array of strings, got \(value.kind)")
        }
        return try items.map { item -> String in
            guard let string = item.stringValue, !string.isEmpty else {
                throw bad("\"\(name)\" must hold non-empty strings, got \(item.serializedString())")
            }
            return string
        }
    }

    func windowIDs(_ name: String) throws -> [WindowID]? {
        guard let value = value(name) else { return nil }
        let problem = bad(
            "\"\(name)\" must be an array of window ids (integers 0...\(UInt32.max)), got \(value.serializedString())")
        guard let items = value.arrayValue else { throw problem }
        return try items.map { item -> WindowID in
            guard let int = item.intValue, int >= 0, int <= Int64(UInt32.max) else { throw problem }
            return WindowID(int)
        }
    }

    func requiredWindowIDs(_ name: String) throws -> [WindowID] {
        guard let ids = try windowIDs(name) else {
            throw bad("\"\(name)\" is required (an array of window ids)")
        }
        return ids
    }

    func rect(_ name: String) throws -> Rect? {
        guard let value = value(name) else { return nil }
        guard let fields = value.objectValue else {
            throw bad("\"\(name)\" must be {\"x\", \"y\", \"width\", \"height\"}, got \(value.serializedString())")
        }
        func field(_ key: String, min: Int64) throws -> Int {
            let member = fields[key] ?? .null
            guard let int = member.intValue, int >= min, int <= Int64(Int32.max) else {
                throw bad("\"\(name).\(key)\" must be an integer in \(min)...\(Int32.max), got \(member.serializedString())")
            }
            return Int(int)
        }
        return Rect(
            x: try field("x", min: Int64(Int32.min)),
            y: try field("y", min: Int64(Int32.min)),
            width: try field("width", min: 1),
            height: try field("height", min: 1))
    }

    /// `[r, g, b]`, each 0...255.
    func color(_ name: String) throws -> (r: UInt8, g: UInt8, b: UInt8)? {
        guard let value = value(name) else { return nil }
        guard let items = value.arrayValue, items.count == 3 else {
            throw bad("\"\(name)\" must be [r, g, b], got \(value.serializedString())")
        }
        let channels = try items.map { item -> UInt8 in
            guard let int = item.intValue, (0...255).contains(int) else {
                throw bad("\"\(name)\" entries must be integers 0...255, got \(item.serializedString())")
            }
            return UInt8(int)
        }
        return (channels[0], channels[1], channels[2])
    }
}
