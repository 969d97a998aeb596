import Foundation

/// One decoded JSON-RPC 2.0 message.
public enum Message: Equatable {
    case request(id: JSON, method: String, params: JSON)
    case notification(method: String)
}

/// A frame body that is not a usable request, with the id to answer with
/// (null when the request's id could not be read).
public struct BadMessage: Error, Equatable {
    public let id: JSON
    public let error: ProtocolError
}

private let requestShapeHint =
    "Send a JSON-RPC 2.0 request object: {\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"...\", \"params\": {...}}."

/// Decodes a frame body into a message.
public func parseMessage(_ body: [UInt8]) -> Result<Message, BadMessage> {
    let value: JSON
    do {
        value = try JSON.parse(body)
    } catch {
        return .failure(
            BadMessage(
                id: .null,
                error: ProtocolError(
                    .parseError, "the frame body is not JSON: \(error.localizedDescription)",
                    hint: "Send one JSON-RPC 2.0 request object per frame.")))
    }
    func invalid(_ id: JSON, _ message: String) -> Result<Message, BadMessage> {
        .failure(BadMessage(id: id, error: ProtocolError(.invalidRequest, message, hint: requestShapeHint)))
    }
    guard case .object(let object) = value else {
        if case .array = value {
            return invalid(.null, "the request is a batch (array); batches are not supported")
        }
        return invalid(.null, "the request is not an object")
    }
    let id: JSON?
    switch object["id"] {
    case nil:
        id = nil
    case .some(let value) where value.isNull || value.stringValue != nil || value.isNumber:
        id = value
    case .some(let other):
        return invalid(.null, "the request id must be a number, string or null, not \(other.kind)")
    }
    let answerID = id ?? .null
    switch object["jsonrpc"] {
    case .string("2.0")?:
        break
    case .some(let other):
        return invalid(answerID, "\"jsonrpc\" must be \"2.0\", not \(other.serializedString())")
    case nil:
        return invalid(answerID, "the request has no \"jsonrpc\": \"2.0\" member")
    }
    let method: String
    switch object["method"] {
    case .string(let name)?:
        method = name
    case .some(let other):
        return invalid(answerID, "\"method\" must be a string, not \(other.kind)")
    case nil:
        return invalid(answerID, "the request has no \"method\"")
    }
    let params = object["params"] ?? .null
    if let id {
        return .success(.request(id: id, method: method, params: params))
    }
    return .success(.notification(method: method))
}

extension JSON {
    var isNumber: Bool {
        switch self {
        case .int, .double: return true
        default: return false
        }
    }
}

/// Encodes a success response. A result whose encoding is over the response
/// cap becomes an `invalid_params` error instead (PROTOCOL.md, `capture`).
public func successBody(id: JSON, result: JSON) -> [UInt8] {
    let body: JSON = ["jsonrpc": "2.0", "id": id, "result": result]
    let bytes = body.serialized()
    if bytes.count <= FrameLimits.maxResponseBytes {
        return bytes
    }
    return failureBody(
        id: id,
        error: ProtocolError(
            .invalidParams,
            "the response would be \(bytes.count) bytes, over the \(FrameLimits.maxResponseBytes)-byte cap",
            hint: "Ask for less: a smaller output size, JPEG instead of PNG, or a smaller rectangle."))
}

/// Encodes an error response.
public func failureBody(id: JSON, error: ProtocolError) -> [UInt8] {
    let body: JSON = ["jsonrpc": "2.0", "id": id, "error": error.json]
    return body.serialized()
}
