import Foundation

/// The stdio loop without the stdio: it reads byte chunks from any async
/// sequence, frames them, lets the handler answer each request in order and
/// writes frames through `write`. `main` gives it stdin and stdout; the
/// tests give it an in-memory pipe, so framing errors and exit statuses are
/// tested the same way as requests.
@MainActor
public final class Server {
    private let handler: RequestHandler
    private let log: Log

    public init(handler: RequestHandler, log: Log) {
        self.handler = handler
        self.log = log
    }

    /// Serves until the input ends (status 0), framing is lost (status 2),
    /// an `exit` (its status), or writing fails (status 1). Returns the exit
    /// status; it never exits the process itself. Notifications (the Escape
    /// watch's) are written through `write` too, between responses: both
    /// run on the main actor and write whole frames, so they never interleave.
    public func serve<Input: AsyncSequence>(
        _ input: Input, write: @escaping ([UInt8]) throws -> Void
    ) async -> Int32 where Input.Element == [UInt8] {
        let log = self.log
        handler.notify = { frame in
            do {
                try write(frame)
            } catch {
                log.warn("writing a notification failed: \(error.localizedDescription)")
            }
        }
        defer { handler.notify = { _ in } }
        var decoder = FrameDecoder(cap: FrameLimits.maxRequestBytes)
        do {
            for try await chunk in input {
                decoder.push(chunk)
                while true {
                    let body: [UInt8]
                    do {
                        guard let next = try decoder.next() else { break }
                        body = next
                    } catch let error as FrameError {
                        log.error("\(error.errorDescription ?? "bad frame"); framing is lost, answering once and exiting with status 2")
                        if let protocolError = error.protocolError {
                            try write(encodeFrame(failureBody(id: .null, error: protocolError)))
                        }
                        return 2
                    }
                    let outcome = await handler.handle(body)
                    if let raw = outcome.raw {
                        try write(raw)
                    }
                    if let reply = outcome.reply {
                        try write(encodeFrame(reply))
                    }
                    if let code = outcome.exit {
                        log.info("exiting with status \(code) as asked")
                        return code
                    }
                }
            }
        } catch {
            log.error("stdio failed: \(error.localizedDescription); exiting")
            return 1
        }
        do {
            try decoder.finish()
            log.info("stdin closed; exiting")
        } catch {
            log.warn("\(error.localizedDescription); stdin closed, exiting")
        }
        return 0
    }
}
