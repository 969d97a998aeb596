import Foundation

/// Sizes from helpers/PROTOCOL.md, "Transport".
public enum FrameLimits {
    /// Longest header block accepted, the terminating blank line included.
    public static let maxHeaderBytes = 1024
    /// Largest request body the helper reads (clipboard text included).
    public static let maxRequestBytes = 1 << 20
    /// Largest response body the helper writes.
    public static let maxResponseBytes = 64 << 20
}

/// Why a frame could not be read.
public enum FrameError: LocalizedError, Equatable {
    /// The header block is malformed; framing is lost.
    case badHeader(String)
    /// The announced body is over the cap; it was not read.
    case tooLarge(length: UInt64, cap: Int)
    /// The input ended inside a frame.
    case truncated(expected: UInt64, got: UInt64)

    public var errorDescription: String? {
        switch self {
        case .badHeader(let why):
            return "bad frame header: \(why)"
        case .tooLarge(let length, let cap):
            return "frame body of \(length) bytes is over the \(cap)-byte cap"
        case .truncated(let expected, let got):
            return "input ended inside a frame (\(got) of \(expected) bytes read)"
        }
    }

    /// What the peer is told before the helper gives up on the stream, or
    /// nil when the stream has ended and nobody is left to tell.
    public var protocolError: ProtocolError? {
        let message = errorDescription ?? "bad frame"
        switch self {
        case .badHeader:
            return ProtocolError(
                .parseError, message,
                hint: "Frame each message as `Content-Length: N\\r\\n\\r\\n` plus N bytes of JSON; the helper exits and must be restarted.")
        case .tooLarge:
            return ProtocolError(
                .invalidRequest, message,
                hint: "Keep requests under 1 MiB (clipboard text included); the helper exits and must be restarted.")
        case .truncated:
            return nil
        }
    }
}

/// Wraps a body in a frame.
public func encodeFrame(_ body: [UInt8]) -> [UInt8] {
    var out = Array("Content-Length: \(body.count)\r\n\r\n".utf8)
    out.append(contentsOf: body)
    return out
}

/// Splits a byte stream into frame bodies. Bytes are pushed in as they
/// arrive, in chunks of any size, and `next()` hands out whole bodies, so the
/// same decoder serves stdin, a test's in-memory pipe and the test runner
/// reading the helper's output.
///
/// It is strict on purpose: after one bad frame every later byte boundary is
/// a guess, so a header is checked line by line as soon as each line is
/// complete, and a peer speaking another framing (one JSON object per line,
/// say) is told at once instead of the helper waiting for more bytes.
public struct FrameDecoder {
    private let cap: Int
    private var buffer: [UInt8] = []
    /// Start of the unconsumed bytes in `buffer`.
    private var start = 0
    /// The body length once the current frame's header has been read.
    private var pendingBody: Int?

    public init(cap: Int) {
        self.cap = cap
    }

    public mutating func push<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        buffer.append(contentsOf: bytes)
    }

    /// True when no partial frame is buffered.
    public var isIdle: Bool { start == buffer.count && pendingBody == nil }

    /// The next whole body, or nil when more bytes are needed. After an
    /// error the stream cannot be framed any more and the decoder must not
    /// be used again.
    public mutating func next() throws -> [UInt8]? {
        if pendingBody == nil {
            guard let header = try readHeader() else {
                return nil
            }
            let (length, headerEnd) = header
            if length > UInt64(cap) {
                throw FrameError.tooLarge(length: length, cap: cap)
            }
            pendingBody = Int(length)
            start = headerEnd
        }
        guard let length = pendingBody, buffer.count - start >= length else {
            return nil
        }
        let body = Array(buffer[start..<start + length])
        start += length
        pendingBody = nil
        compact()
        return body
    }

    /// Call at end of input: throws when it ended inside a frame.
    public func finish() throws {
        if let length = pendingBody {
            throw FrameError.truncated(expected: UInt64(length), got: UInt64(buffer.count - start))
        }
        if start < buffer.count {
            throw FrameError.truncated(expected: 0, got: UInt64(buffer.count - start))
        }
    }

    private mutating func compact() {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.count <= 1 << 16)
            start = 0
        } else if start > 1 << 16 {
            buffer.removeFirst(start)
            start = 0
        }
    }

    /// Scans the header block from `start`. Returns the Content-Length and
    /// the index just past the blank line, nil when the block is not complete
    /// yet, or throws as soon as what has arrived cannot be a valid header.
    private func readHeader() throws -> (UInt64, Int)? {
        var lineStart = start
        var contentLength: UInt64?
        var index = start
        while index < buffer.count {
            let byte = buffer[index]
            let headerLength = index - start + 1
            if headerLength > FrameLimits.maxHeaderBytes {
                throw FrameError.badHeader("header block longer than \(FrameLimits.maxHeaderBytes) bytes")
            }
            if headerLength == 1 && byte != UInt8(ascii: "C") && byte != UInt8(ascii: "c") {
                throw FrameError.badHeader("expected a Content-Length header, got \(describe(byte))")
            }
            index += 1
            guard byte == UInt8(ascii: "\n") else {
                continue
            }
            let line = buffer[lineStart..<index]
            lineStart = index
            guard line.count >= 2, line[line.endIndex - 2] == UInt8(ascii: "\r") else {
                throw FrameError.badHeader("header line ends with a bare \\n; lines must end with \\r\\n")
            }
            let content = line.dropLast(2)
            if content.isEmpty {
                guard let contentLength else {
                    throw FrameError.badHeader("no Content-Length header")
                }
                return (contentLength, index)
            }
            if let length = try parseHeaderLine(content) {
                if contentLength != nil {
                    throw FrameError.badHeader("more than one Content-Length header")
                }
                contentLength = length
            }
        }
        return nil
    }

    /// One header line without its CRLF: the length for a Content-Length
    /// line, nil for an accepted line that carries nothing.
    private func parseHeaderLine(_ line: ArraySlice<UInt8>) throws -> UInt64? {
        guard let text = String(bytes: line, encoding: .utf8) else {
            throw FrameError.badHeader("header line is not UTF-8")
        }
        let shown = quoted(String(text.prefix(60)))
        guard let colon = text.firstIndex(of: ":") else {
            throw FrameError.badHeader("header line \(shown) has no colon")
        }
        let name = text[..<colon]
        let value = text[text.index(after: colon)...].trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
        if name.caseInsensitiveCompare("Content-Length") == .orderedSame {
            guard !value.isEmpty, value.count <= 19, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let length = UInt64(value)
            else {
                throw FrameError.badHeader("Content-Length \(quoted(value)) is not a decimal byte count")
            }
            return length
        }
        if name.caseInsensitiveCompare("Content-Type") == .orderedSame {
            return nil
        }
        throw FrameError.badHeader("unexpected header line \(shown)")
    }

    private func describe(_ byte: UInt8) -> String {
        if byte > 0x20 && byte < 0x7F {
            return quoted(String(UnicodeScalar(byte)))
        }
        return "byte 0x" + String(byte, radix: 16, uppercase: false).leftPadded(to: 2)
    }
}

extension String {
    func leftPadded(to width: Int, with pad: Character = "0") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}
