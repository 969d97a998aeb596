import Foundation

/// The protocol versions this helper speaks.
public let supportedProtocolVersions: [Int64] = [1]

/// What to do after one request.
public struct Outcome: Equatable {
    /// Bytes to write to stdout unframed (only `fault.garbage`).
    public var raw: [UInt8]?
    /// The response body to frame and send.
    public var reply: [UInt8]?
    /// Exit with this status after writing.
    public var exit: Int32?

    public init(raw: [UInt8]? = nil, reply: [UInt8]? = nil, exit: Int32? = nil) {
        self.raw = raw
        self.reply = reply
        self.exit = exit
    }
}

/// Answers one request body at a time: `handle` maps the bytes of a request
/// to the bytes of its response (plus, rarely, an exit), so the protocol is
/// testable without pipes or processes. It keeps the session state: the
/// handshake, the capture counter and the last capture for `patch_check`.
@MainActor
public final class RequestHandler {
    public struct Configuration: Sendable {
        public var helperVersion: String
        /// Answer the test-only `fault.*` methods (DESKHAND_HELPER_FAULTS=1).
        public var faults: Bool

        public init(helperVersion: String, faults: Bool) {
            self.helperVersion = helperVersion
            self.faults = faults
        }
    }

    /// The methods that need the handshake first.
    static let methods: Set<String> = [
        "displays", "capture", "windows", "window_at", "patch_check", "patch_baseline", "clipboard_read", "clipboard_write",
        "hide", "restore", "permissions", "apps", "key_layout", "a11y_apps", "a11y_tree", "a11y_element", "a11y_act",
        "teach_show", "teach_poll", "teach_hide", "watch_escape", "indicator",
    ]

    /// Longest `fault.sleep`.
    static let maxFaultSleepMilliseconds: Int64 = 600_000

    private struct LastCapture {
        let id: UInt64
        var frame: CapturedFrame
    }

    private let configuration: Configuration
    private let desktop: Desktop
    private let encoder: ImageEncoder
    private let log: Log
    private var handshaken = false
    private var watchingEscape = false
    /// Writes a framed notification between responses (the Server sets
    /// it to its output); the Escape watch sends through it.
    public var notify: ([UInt8]) -> Void = { _ in }
    private var nextCaptureID: UInt64 = 1
    private var last: LastCapture?

    public init(configuration: Configuration, desktop: Desktop, encoder: ImageEncoder, log: Log) {
        self.configuration = configuration
        self.desktop = desktop
        self.encoder = encoder
        self.log = log
    }

    /// Answers one frame body.
    public func handle(_ body: [UInt8]) async -> Outcome {
        switch parseMessage(body) {
        case .failure(let bad):
            log.warn("bad request: \(bad.error.message)")
            return Outcome(reply: failureBody(id: bad.id, error: bad.error))
        case .success(.notification(let method)):
            if method == "exit" {
                return Outcome(exit: 0)
            }
            log.debug("ignoring notification \(quoted(method))")
            return Outcome()
        case .success(.request(let id, let method, let params)):
            let started = Date()
            let outcome: Outcome
            do {
                outcome = try await dispatch(id: id, method: method, params: params)
            } catch {
                let failure = ProtocolError(from: error, during: method)
                log.debug("\(method) failed: \(failure.message) (\(failure.code.rawValue))")
                outcome = Outcome(reply: failureBody(id: id, error: failure))
            }
            log.debug("\(method) answered in \(String(format: "%.2f", Date().timeIntervalSince(started) * 1000)) ms")
            return outcome
        }
    }

    private func dispatch(id: JSON, method: String, params: JSON) async throws -> Outcome {
        if method.hasPrefix("fault.") && configuration.faults {
            return try await fault(id: id, method: method, params: params)
        }
        switch method {
        case "handshake":
            let result = try await handshake(params)
            handshaken = true
            return Outcome(reply: successBody(id: id, result: result))
        case "exit":
            return Outcome(reply: successBody(id: id, result: .object(JSONObject())), exit: 0)
        default:
            break
        }
        guard Self.methods.contains(method) else {
            throw ProtocolError.methodNotFound(method)
        }
        guard handshaken else {
            throw ProtocolError(
                .handshakeRequired, "\(method) was called before handshake",
                hint: "Call handshake first, offering the protocol versions the client speaks.")
        }
        let p = try Params(method: method, params: params)
        let result: JSON
        switch method {
        case "displays":
            result = ["displays": .array(try await desktop.displays().map(\.json))]
        case "capture":
            return Outcome(reply: try await capture(id: id, p))
        case "windows":
            let includeHidden = try p.bool("include_hidden") ?? false
            result = try await desktop.windows(includeHidden: includeHidden).json
        case "window_at":
            let point = Point(x: try p.requiredCoordinate("x"), y: try p.requiredCoordinate("y"))
            let window = try await desktop.window(at: point)
            result = ["window": .optional(window) { $0.json }, "app": .optional(window) { $0.app.json }]
        case "patch_check":
            result = try await patchCheck(p)
        case "patch_baseline":
            result = try await patchBaseline(p)
        case "clipboard_read":
            try Self.checkSelection(p)
            result = ["text": .string(try await desktop.readClipboard())]
        case "clipboard_write":
            let text = try p.requiredString("text")
            try Self.checkSelection(p)
            try await desktop.writeClipboard(text)
            result = ["ok": true]
        case "hide":
            let ids = try p.requiredWindowIDs("windows")
            result = ["hidden": .array(try await desktop.hide(ids).map { JSON($0) })]
        case "restore":
            let ids = try p.requiredWindowIDs("windows")
            result = ["restored": .array(try await desktop.restore(ids).map { JSON($0) })]
        case "permissions":
            result = try await permissions(p)
        case "apps":
            // macOS apps are bundles, named by bundle id (open_application
            // launches through Launch Services); there are no desktop entries.
            throw ProtocolError(
                .unsupported, "macOS has no freedesktop.org desktop entries; apps are bundles, named by bundle id",
                hint: "Name the app by its bundle id or name; open_application launches it through Launch Services.")
        case "key_layout":
            result = try await desktop.keyLayout()
        case "a11y_apps":
            result = try await desktop.a11yApps()
        case "a11y_tree":
            result = try await desktop.a11yTree(try Self.treeRequest(p))
        case "a11y_element":
            result = try await desktop.a11yElement(pid: try Self.pid(p), ref: try Self.ref(p))
        case "a11y_act":
            let pid = try Self.pid(p)
            let ref = try Self.ref(p)
            let operation = try A11yOperation(p)
            try await desktop.a11yAct(pid: pid, ref: ref, operation)
            result = ["ok": true, "op": .string(operation.name)]
        case "teach_show":
            result = try await desktop.teachShow(try Self.teachRequest(p))
        case "teach_poll":
            result = try await desktop.teachPoll()
        case "teach_hide":
            try await desktop.teachHide()
            result = .object(JSONObject())
        case "indicator":
            guard let visible = try p.bool("visible") else {
                throw p.bad("\"visible\" must be true or false")
            }
            result = try await desktop.indicator(visible: visible)
        case "watch_escape":
            try desktop.watchKeyboard { [weak self] key in self?.keyDown(key) }
            if !watchingEscape {
                log.info("watching the keyboard for the user's Escape")
            }
            watchingEscape = true
            result = ["watching": true]
        default:
            throw ProtocolError.internal("\(method) is known but not dispatched")
        }
        return Outcome(reply: successBody(id: id, result: result))
    }

    /// The clipboard methods' "selection": the pasteboard is "clipboard"
    /// (the default). X11's PRIMARY selection and cut buffer have no macOS
    /// counterpart, so they are unsupported rather than quietly aliased to
    /// the pasteboard, which would make a clear of them wipe the user's
    /// pasteboard.
    private static func checkSelection(_ p: Params) throws {
        switch try p.string("selection") ?? "clipboard" {
        case "clipboard":
            return
        case "primary", "cut_buffer":
            throw ProtocolError(
                .unsupported, "macOS has no PRIMARY selection or cut buffer; only the pasteboard (\"selection\": \"clipboard\") exists",
                hint: "Leave \"selection\" out, or set it to \"clipboard\".")
        case let other:
            throw p.bad("\"selection\" must be \"clipboard\", \"primary\" or \"cut_buffer\", got \"\(other)\"")
        }
    }

    static func pid(_ p: Params) throws -> Int32 {
        Int32(try p.requiredInt("pid", in: 1...Int64(Int32.max)))
    }

    static func ref(_ p: Params) throws -> String {
        let ref = try p.requiredString("ref")
        if ref.isEmpty {
            throw p.bad("\"ref\" must be an element ref from a11y_tree, got an empty string")
        }
        return ref
    }

    static func treeRequest(_ p: Params) throws -> A11yTreeRequest {
        A11yTreeRequest(
            pid: try pid(p),
            window: try p.int("window", in: 0...Int64(UInt32.max)).map { WindowID($0) },
            title: try p.string("title"),
            maxNodes: try p.int("max_nodes", in: 1...100_000) ?? 2000,
            maxDepth: try p.int("max_depth", in: 1...1000) ?? 60,
            deadlineMilliseconds: try p.int("deadline_ms", in: 1...60_000) ?? 2000)
    }

    static func teachRequest(_ p: Params) throws -> TeachRequest {
        let explanation = try p.requiredString("explanation")
        let preview = try p.requiredString("next_preview")
        if explanation.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            throw p.bad("\"explanation\" must say what this step does; it is empty")
        }
        var anchor: Point?
        if let value = p.value("anchor") {
            guard let fields = value.objectValue, let x = fields["x"]?.intValue, let y = fields["y"]?.intValue,
                (Int64(Int32.min)...Int64(Int32.max)).contains(x), (Int64(Int32.min)...Int64(Int32.max)).contains(y)
            else {
                throw p.bad("\"anchor\" must be {\"x\": int, \"y\": int} in global coordinates, got \(value.serializedString())")
            }
            anchor = Point(x: Int(x), y: Int(y))
        }
        let step = try p.int("step", in: 1...10_000)
        let total = try p.int("total", in: 1...10_000)
        if let step, let total, step > total {
            throw p.bad("\"step\" \(step) is past \"total\" \(total)")
        }
        return TeachRequest(explanation: explanation, nextPreview: preview, anchor: anchor, step: step, total: total)
    }

    private func handshake(_ params: JSON) async throws -> JSON {
        let p = try Params(method: "handshake", params: params)
        guard let offeredValue = p.value("protocol_versions") else {
            throw p.bad("\"protocol_versions\" is required, e.g. [1]")
        }
        guard let items = offeredValue.arrayValue else {
            throw p.bad("\"protocol_versions\" must be an array of integers, got \(offeredValue.kind)")
        }
        let offered = try items.map { item -> Int64 in
            guard let version = item.intValue else {
                throw p.bad("\"protocol_versions\" must hold integers, got \(item.serializedString())")
            }
            return version
        }
        let client = try p.string("client") ?? "unknown client"
        guard let version = offered.filter({ supportedProtocolVersions.contains($0) }).max() else {
            throw ProtocolError(
                .incompatibleProtocol,
                "\(client) offers protocol versions \(offered), but deskhand-helper \(configuration.helperVersion) speaks \(supportedProtocolVersions)",
                hint: "Install matching versions of deskhand and deskhand-helper (deskhand's installer fetches the right helper).")
        }
        let info = await desktop.platformInfo()
        if !handshaken {
            log.info("handshake from \(client): protocol \(version)")
        }
        var result: JSON = [
            "protocol_version": .int(version),
            "helper_version": .string(configuration.helperVersion),
            "platform": .string(info.platform),
            "capabilities": .array(info.capabilities.map { .string($0) }),
            "display": .optional(info.display) { .string($0) },
            "extensions": info.extensions,
        ]
        if let displayError = info.displayError, case .object(var object) = result {
            object["display_error"] = .string(displayError)
            result = .object(object)
        }
        return result
    }

    private func capture(id: JSON, _ p: Params) async throws -> [UInt8] {
        let format: ImageFormat
        switch try p.string("format") {
        case nil, "jpeg"?: format = .jpeg
        case "png"?: format = .png
        case let other?: throw p.bad("\"format\" must be \"jpeg\" or \"png\", got \(quoted(other))")
        }
        let width = try p.int("width", in: 1...Int64(Geometry.maxOutputSide))
        let height = try p.int("height", in: 1...Int64(Geometry.maxOutputSide))
        // Every size rule (both or neither, the area cap) is checked here,
        // before the desktop is touched: a bad size is a bad request with a
        // display or without one, with Screen Recording or without it, and
        // it must not cost a capture. (Without a requested size the output
        // is the source's, which is within the limits.)
        if (width == nil) != (height == nil) {
            throw p.bad("give both \"width\" and \"height\", or neither for the native size")
        }
        let requested = try Geometry.outputSize(width: width, height: height, native: Size(width: 1, height: 1))
        let quality = try p.int("quality", in: 1...100) ?? 80
        let maskColor = try p.color("mask_color") ?? (24, 24, 24)
        var mask = try p.windowIDs("mask") ?? []
        let maskOthers = try p.bool("mask_others") ?? false
        let keep = try p.windowIDs("keep") ?? []
        let includeApps = try p.strings("include_apps")
        let display = try p.int("display", in: 0...Int64(UInt32.max)).map { DisplayID($0) }
        let target: CaptureTarget
        if let rect = try p.rect("rect") {
            target = .rect(rect)
        } else {
            target = .display(display)
        }
        if maskOthers {
            // Fail closed: every listed window the caller did not name in
            // `keep` is left out, unknown owners and new popups included.
            mask = MaskPlan.maskOthers(mask: mask, keep: keep, windows: try await desktop.windows(includeHidden: false))
        }
        let request = CaptureRequest(target: target, mask: mask, maskColor: maskColor, includeApps: includeApps)

        let frame = try await desktop.capture(request)
        // The native output size is the source in points, so that by default
        // one image pixel is one point of the coordinate space (as on X11);
        // ask for width and height to get backing-resolution detail.
        let output = width == nil ? frame.source.size : requested
        let started = Date()
        let encoded = try encoder.encode(frame.pixels, size: output, format: format, quality: quality)
        let data = Data(encoded).base64EncodedString()
        if data.utf8.count + 1024 > FrameLimits.maxResponseBytes {
            throw ProtocolError(
                .invalidParams,
                "the \(output.width)x\(output.height) \(format.rawValue) image would make a response over the \(FrameLimits.maxResponseBytes)-byte cap",
                hint: "Ask for less: a smaller output size, JPEG instead of PNG, or a smaller rectangle.")
        }
        let captureID = nextCaptureID
        nextCaptureID += 1
        last = LastCapture(id: captureID, frame: frame)
        log.debug(
            "capture \(captureID): \(frame.source) (\(frame.pixels.width)x\(frame.pixels.height) px) -> \(output.width)x\(output.height) \(format.rawValue), encoded in \(String(format: "%.2f", Date().timeIntervalSince(started) * 1000)) ms, \(data.utf8.count) base64 bytes"
        )
        var result: JSON = [
            "format": .string(format.rawValue),
            "data": .string(data),
            "width": JSON(output.width),
            "height": JSON(output.height),
            "source": frame.source.json,
            "display": .optional(frame.display) { JSON($0) },
            "masked": .array(frame.masked.map { JSON($0) }),
            "method": .string(frame.method),
            "capture_id": JSON(captureID),
            // ScreenCaptureKit gives a new frame for every capture; serving
            // the previous image again is the X11 helper's, from DAMAGE.
            "reused": false,
        ]
        if maskOthers, case .object(var object) = result {
            object["mask_others"] = true
            result = .object(object)
        }
        return successBody(id: id, result: result)
    }

    private func patchCheck(_ p: Params) async throws -> JSON {
        let x = try p.requiredCoordinate("x")
        let y = try p.requiredCoordinate("y")
        let size = try p.int("size", in: 1...63) ?? 9
        if size % 2 == 0 {
            throw p.bad("\"size\" must be odd (the patch is centred on the point), got \(size)")
        }
        let tolerance = try p.int("tolerance", in: 0...255) ?? 0
        guard let last else {
            throw ProtocolError(
                .noCapture, "patch_check compares against the last capture, and there has been none",
                hint: "Call capture first, then patch_check points inside it.")
        }
        let source = last.frame.source
        let rect = try Geometry.patchRect(x: x, y: y, size: size, within: source)
        let pixels = last.frame.pixels
        let region = Geometry.pixelRect(of: rect, in: source, pixels: Size(width: pixels.width, height: pixels.height))
        guard let before = pixels.crop(x: region.x, y: region.y, width: region.width, height: region.height) else {
            throw ProtocolError.internal("the patch \(rect) maps to pixels outside the last capture")
        }
        let live = try await desktop.recapture(
            rect, pixelSize: Size(width: region.width, height: region.height), like: last.frame)
        guard let comparison = PatchComparison.compare(before, live, tolerance: tolerance) else {
            throw ProtocolError.captureFailed(
                "the live patch is \(live.width)x\(live.height) pixels, the capture's \(before.width)x\(before.height)")
        }
        return [
            "changed": .bool(comparison.differingPixels > 0),
            "differing_pixels": JSON(comparison.differingPixels),
            "max_delta": JSON(comparison.maxDelta),
            "capture_id": JSON(last.id),
        ]
    }

    /// Reads the last capture's source again, the way it was captured, and
    /// keeps those pixels as the reference for `patch_check`, under the
    /// same capture id; counts how many pixels moved past `tolerance`.
    private func patchBaseline(_ p: Params) async throws -> JSON {
        let tolerance = try p.int("tolerance", in: 0...255) ?? 0
        guard var current = last else {
            throw ProtocolError(
                .noCapture, "patch_baseline reads the last capture's area again, and there has been none",
                hint: "Call capture first.")
        }
        let before = current.frame.pixels
        let live = try await desktop.recapture(
            current.frame.source, pixelSize: Size(width: before.width, height: before.height), like: current.frame)
        guard let comparison = PatchComparison.compare(before, live, tolerance: tolerance) else {
            throw ProtocolError.captureFailed(
                "the live source is \(live.width)x\(live.height) pixels, the capture's \(before.width)x\(before.height)")
        }
        current.frame.pixels = live
        last = current
        return [
            "differing_pixels": JSON(comparison.differingPixels),
            "capture_id": JSON(current.id),
        ]
    }

    /// macOS extension: `{"require": ["screen_recording", "accessibility", "input_monitoring"]}`
    /// answers each permission's state, or fails with `permission_denied`
    /// for the first required one that is missing. Nothing here prompts.
    private func permissions(_ p: Params) async throws -> JSON {
        let required = try (p.strings("require") ?? []).map { name -> Permission in
            guard let permission = Permission(rawValue: name) else {
                throw p.bad(
                    "\"require\" entries must be \(Permission.allCases.map { quoted($0.rawValue) }.joined(separator: " or ")), got \(quoted(name))")
            }
            return permission
        }
        let status = await desktop.permissionStatus()
        if let missing = required.first(where: { status[$0] != true }) {
            throw desktop.permissionDenied(missing)
        }
        var object = JSONObject()
        for permission in Permission.allCases {
            object[permission.rawValue] = .bool(status[permission] == true)
        }
        return .object(object)
    }

    /// One key press the keyboard watch saw: the user's Escape is sent
    /// to the supervisor as `escape_pressed`; any other key, and deskhand's
    /// own Escape, is dropped here and never leaves the helper.
    func keyDown(_ key: KeyDown) {
        guard EscapeWatch.isUsersEscape(key, ownPIDs: EscapeWatch.ownPIDs) else {
            if key.keyCode == EscapeWatch.escapeKeyCode {
                log.debug("Escape from deskhand's own input (pid \(key.sourcePID)); not reported")
            }
            return
        }
        log.info("the user pressed Escape; telling the supervisor")
        notify(EscapeWatch.notificationFrame(key))
    }

    private func fault(id: JSON, method: String, params: JSON) async throws -> Outcome {
        let p = try Params(method: method, params: params)
        switch method {
        case "fault.sleep":
            let milliseconds = try p.requiredInt("ms", in: 0...Self.maxFaultSleepMilliseconds)
            try await Task.sleep(nanoseconds: UInt64(milliseconds) * 1_000_000)
            return Outcome(reply: successBody(id: id, result: .object(JSONObject())))
        case "fault.garbage":
            return Outcome(raw: Array("fault.garbage: these bytes are not a protocol frame\n".utf8))
        case "fault.exit":
            let code = try p.requiredInt("code", in: 0...255)
            return Outcome(exit: Int32(code))
        case "fault.key_down":
            // A key press as the keyboard watch's tap reports it, through
            // the same filter: the notification, if any, precedes the reply.
            let keyCode = try p.requiredInt("key_code", in: 0...0xFFFF)
            let userData = try p.int("user_data", in: Int64.min...Int64.max) ?? 0
            var poster = Int64(try p.int("source_pid", in: 0...Int64(Int32.max)) ?? 0)
            if try p.bool("from_parent") ?? false {
                poster = Int64(getppid())
            }
            keyDown(KeyDown(keyCode: Int64(keyCode), sourceUserData: Int64(userData), sourcePID: poster))
            return Outcome(reply: successBody(id: id, result: .object(JSONObject())))
        default:
            throw ProtocolError.methodNotFound(method)
        }
    }
}
