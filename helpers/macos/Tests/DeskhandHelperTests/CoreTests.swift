import DeskhandHelperCore
import Foundation
import XCTest

final class JSONTests: XCTestCase {
    func testKeepsIntegersFloatsAndBooleansApart() throws {
        let value = try JSON.parse(#"{"i": 80, "f": 80.5, "whole": 80.0, "t": true, "one": 1, "n": null, "big": 4294967294}"#)
        XCTAssertEqual(value["i"], .int(80))
        XCTAssertEqual(value["f"], .double(80.5))
        XCTAssertNil(value["whole"]?.intValue, "80.0 is a float, as serde_json reads it")
        XCTAssertEqual(value["t"], .bool(true))
        XCTAssertEqual(value["one"], .int(1))
        XCTAssertEqual(value["n"], .null)
        XCTAssertEqual(value["big"], .int(4_294_967_294))
    }

    func testNumbersBeyondInt64AreNeverWrapped() throws {
        let value = try JSON.parse(#"[9223372036854775807, 9223372036854775808, 18446744073709551615, -9223372036854775808, -9223372036854775809, 1e2, -0, 0.5e-3]"#)
        XCTAssertEqual(value.arrayValue?[0], .int(Int64.max))
        XCTAssertEqual(value.arrayValue?[1], .double(9_223_372_036_854_775_808), "one past Int64.max is a float, not a negative integer")
        XCTAssertEqual(value.arrayValue?[2], .double(18_446_744_073_709_551_616))
        XCTAssertEqual(value.arrayValue?[3], .int(Int64.min))
        XCTAssertEqual(value.arrayValue?[4], .double(-9_223_372_036_854_775_808))
        XCTAssertEqual(value.arrayValue?[5], .double(100), "an exponent makes a float, as serde_json reads it")
        XCTAssertEqual(value.arrayValue?[6], .int(0))
        XCTAssertEqual(value.arrayValue?[7], .double(0.0005))
    }

    func testReadsEscapesAndKeepsMemberOrder() throws {
        let value = try JSON.parse(#"{"z": "a\u00e9\ud83d\ude80\/\n", "a": [], "m": {}}"#)
        XCTAssertEqual(value["z"], .string("aé🚀/\n"))
        XCTAssertEqual(value.objectValue?.keys, ["z", "a", "m"])
    }

    func testRejectsWhatIsNotJSON() {
        for text in [
            "", "this is not json", #"{"jsonrpc": "2.0", "id": 1, "method": "#, "[1,", "01", "1.", "-", "[1] x",
            #""\ud83d""#, "\"tab\t\"", "{\"a\" 1}", "tru", String(repeating: "[", count: 600),
        ] {
            XCTAssertThrowsError(try JSON.parse(text), "JSON.parse(\(text.debugDescription))")
        }
    }

    func testWritesCompactOrderedEscapedJSON() throws {
        let value: JSON = [
            "b": "quote \" backslash \\ newline \n tab \t bell \u{07} ü ✓ 🚀",
            "a": [1, 2.5, true, .null],
            "o": ["z": 0],
        ]
        let text = value.serializedString()
        XCTAssertEqual(
            text,
            #"{"b":"quote \" backslash \\ newline \n tab \t bell \u0007 ü ✓ 🚀","a":[1,2.5,true,null],"o":{"z":0}}"#)
        XCTAssertEqual(try JSON.parse(text), value, "writing then reading gives the value back")
    }
}

final class FramingTests: XCTestCase {
    func testReadsFramesSplitAnywhere() throws {
        var input = encodeFrame(Array(#"{"a":1}"#.utf8))
        input += Array("Content-Type: application/json\r\ncontent-length:  2\r\n\r\n{}".utf8)
        input += encodeFrame([])
        // Byte by byte: a frame is handed out only once it is whole.
        var decoder = FrameDecoder(cap: FrameLimits.maxRequestBytes)
        var bodies: [[UInt8]] = []
        for byte in input {
            decoder.push([byte])
            while let body = try decoder.next() {
                bodies.append(body)
            }
        }
        XCTAssertEqual(bodies, [Array(#"{"a":1}"#.utf8), Array("{}".utf8), []])
        XCTAssertTrue(decoder.isIdle)
        XCTAssertNoThrow(try decoder.finish())
    }

    func testRejectsBadHeadersAtOnce() {
        let cases = [
            "{\"jsonrpc\":\"2.0\"}\n",
            "Content-Length: 2\n\n{}",
            "Content-Length: -2\r\n\r\n{}",
            "Content-Length: 0x10\r\n\r\n",
            "Content-Length: 2\r\nX-Other: 1\r\n\r\n{}",
            "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
            "Content-Type: json\r\n\r\n{}",
            "Content-Length 2\r\n\r\n{}",
            "Content-Length: 99999999999999999999999\r\n\r\n",
            "Content-Lenght: 2\r\n\r\n{}",
            "Content-Length: twelve\r\n\r\n",
        ]
        for text in cases {
            var decoder = FrameDecoder(cap: FrameLimits.maxRequestBytes)
            decoder.push(Array(text.utf8))
            XCTAssertThrowsError(try decoder.next(), "FrameDecoder(\(text.debugDescription))") { error in
                guard case FrameError.badHeader = error else {
                    return XCTFail("FrameDecoder(\(text.debugDescription)) threw \(error), want badHeader")
                }
                XCTAssertEqual((error as? FrameError)?.protocolError?.code, .parseError)
            }
        }
    }

    func testRejectsLongHeaderBlockAndOversizedBody() {
        var decoder = FrameDecoder(cap: FrameLimits.maxRequestBytes)
        decoder.push(Array("Content-Type: ".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 2000))
        XCTAssertThrowsError(try decoder.next()) { error in
            XCTAssertEqual(error as? FrameError, .badHeader("header block longer than 1024 bytes"))
        }
        var big = FrameDecoder(cap: FrameLimits.maxRequestBytes)
        big.push(Array("Content-Length: \(FrameLimits.maxRequestBytes + 1)\r\n\r\n".utf8))
        XCTAssertThrowsError(try big.next()) { error in
            XCTAssertEqual(error as? FrameError, .tooLarge(length: UInt64(FrameLimits.maxRequestBytes + 1), cap: FrameLimits.maxRequestBytes))
            XCTAssertEqual((error as? FrameError)?.protocolError?.code, .invalidRequest)
        }
    }

    func testReportsTruncation() throws {
        var decoder = FrameDecoder(cap: FrameLimits.maxRequestBytes)
        decoder.push(Array("Content-Length: 10\r\n\r\n{}".utf8))
        XCTAssertNil(try decoder.next())
        XCTAssertThrowsError(try decoder.finish()) { error in
            XCTAssertEqual(error as? FrameError, .truncated(expected: 10, got: 2))
        }
    }
}

final class GeometryTests: XCTestCase {
    func testOutputSizeRules() throws {
        let native = Size(width: 1920, height: 1080)
        XCTAssertEqual(try Geometry.outputSize(width: nil, height: nil, native: native), native)
        XCTAssertEqual(try Geometry.outputSize(width: 1456, height: 819, native: native), Size(width: 1456, height: 819))
        XCTAssertEqual(try Geometry.outputSize(width: 7680, height: 4320, native: native), Size(width: 7680, height: 4320))
        for (width, height) in [(100, nil), (nil, 100), (0, 10), (10, -1), (16385, 10), (16384, 16384)] as [(Int?, Int?)] {
            XCTAssertThrowsError(try Geometry.outputSize(width: width, height: height, native: native)) { error in
                XCTAssertEqual((error as? ProtocolError)?.code, .invalidParams, "outputSize(\(String(describing: width)), \(String(describing: height)))")
            }
        }
    }

    func testPatchRectMustLieInsideTheCapture() throws {
        let source = Rect(x: 0, y: 0, width: 100, height: 100)
        XCTAssertEqual(try Geometry.patchRect(x: 20, y: 20, size: 9, within: source), Rect(x: 16, y: 16, width: 9, height: 9))
        XCTAssertEqual(try Geometry.patchRect(x: 0, y: 0, size: 1, within: source), Rect(x: 0, y: 0, width: 1, height: 1))
        for (x, y) in [(2, 50), (500, 500), (96, 50)] {
            XCTAssertThrowsError(try Geometry.patchRect(x: x, y: y, size: 9, within: source)) { error in
                XCTAssertEqual((error as? ProtocolError)?.code, .outOfBounds)
            }
        }
    }

    func testPixelRectFollowsTheCaptureScale() {
        let source = Rect(x: 100, y: 50, width: 200, height: 100)
        // A Retina capture: two pixels per point.
        let retina = Geometry.pixelRect(
            of: Rect(x: 110, y: 60, width: 9, height: 9), in: source, pixels: Size(width: 400, height: 200))
        XCTAssertEqual(retina.x, 20)
        XCTAssertEqual(retina.y, 20)
        XCTAssertEqual(retina.width, 18)
        XCTAssertEqual(retina.height, 18)
    }

    func testPatchComparisonCountsPixelsOverTolerance() {
        let before = PixelBuffer(width: 3, height: 1, fill: (r: 10, g: 20, b: 30))
        var after = before
        after.bytes[0] = 15  // pixel 0: red +5
        after.bytes[6] = 130  // pixel 1: blue +100
        XCTAssertEqual(PatchComparison.compare(before, after, tolerance: 0), PatchComparison(differingPixels: 2, maxDelta: 100))
        XCTAssertEqual(PatchComparison.compare(before, after, tolerance: 5), PatchComparison(differingPixels: 1, maxDelta: 100))
        XCTAssertEqual(PatchComparison.compare(before, before, tolerance: 0), PatchComparison(differingPixels: 0, maxDelta: 0))
        XCTAssertNil(PatchComparison.compare(before, PixelBuffer(width: 1, height: 1, fill: (r: 0, g: 0, b: 0)), tolerance: 0))
    }
}

final class RequestHandlerTests: XCTestCase, @unchecked Sendable {
    @MainActor
    private func call(_ handler: RequestHandler, _ request: JSON) async throws -> JSON {
        let outcome = await handler.handle(request.serialized())
        let reply = try XCTUnwrap(outcome.reply, "no reply to \(request.serializedString())")
        return try JSON.parse(reply)
    }

    // The fake is made in the body, not as a default argument: Swift 5.9
    // (Xcode 15.0-15.2) evaluates default arguments outside the main actor
    // and rejects a main-actor initializer there.
    @MainActor
    private func makeHandler(_ desktop: FakeDesktop? = nil) -> RequestHandler {
        RequestHandler(
            configuration: .init(helperVersion: "0.0.0-test", faults: false), desktop: desktop ?? FakeDesktop(),
            encoder: FakeEncoder(), log: .discard)
    }

    func testOnlyTheUsersEscapeCounts() {
        let own: [Int64] = [4242, 4243]
        let user = KeyDown(keyCode: EscapeWatch.escapeKeyCode, sourceUserData: 0, sourcePID: 0)
        XCTAssertTrue(EscapeWatch.isUsersEscape(user, ownPIDs: own))
        var marked = user
        marked.sourceUserData = EscapeWatch.syntheticMarker
        XCTAssertFalse(EscapeWatch.isUsersEscape(marked, ownPIDs: own), "deskhand's marked Escape counted")
        var posted = user
        posted.sourcePID = 4242
        XCTAssertFalse(EscapeWatch.isUsersEscape(posted, ownPIDs: own), "an Escape the supervisor posted counted")
        var other = user
        other.keyCode = 0
        XCTAssertFalse(EscapeWatch.isUsersEscape(other, ownPIDs: own), "a key other than Escape counted")
        XCTAssertEqual(EscapeWatch.syntheticMarker, 0x6473_6b68_616e_6401, "the marker must match supervisor/input SyntheticMarker")
    }

    /// watch_escape starts the keyboard watch; the user's Escape becomes an
    /// escape_pressed notification, deskhand's own never leaves the helper,
    /// and a refused tap is permission_denied naming Input Monitoring.
    @MainActor
    func testWatchEscapeNotifiesOnlyTheUsersEscape() async throws {
        let desktop = FakeDesktop()
        let handler = makeHandler(desktop)
        var sent: [[UInt8]] = []
        handler.notify = { sent.append($0) }
        _ = try await call(handler, ["jsonrpc": "2.0", "id": 1, "method": "handshake", "params": ["protocol_versions": [1]]])
        let watching = try await call(handler, ["jsonrpc": "2.0", "id": 2, "method": "watch_escape"])
        XCTAssertEqual(watching["result"], ["watching": true])
        let onKeyDown = try XCTUnwrap(desktop.onKeyDown, "watch_escape did not start the keyboard watch")

        onKeyDown(KeyDown(keyCode: EscapeWatch.escapeKeyCode, sourceUserData: EscapeWatch.syntheticMarker, sourcePID: 0))
        onKeyDown(KeyDown(keyCode: EscapeWatch.escapeKeyCode, sourceUserData: 0, sourcePID: Int64(getppid())))
        onKeyDown(KeyDown(keyCode: 0, sourceUserData: 0, sourcePID: 0))
        XCTAssertTrue(sent.isEmpty, "deskhand's own Escape or another key was reported")
        onKeyDown(KeyDown(keyCode: EscapeWatch.escapeKeyCode, sourceUserData: 0, sourcePID: 0))
        XCTAssertEqual(sent.count, 1)
        var decoder = FrameDecoder(cap: FrameLimits.maxRequestBytes)
        decoder.push(try XCTUnwrap(sent.first))
        let note = try JSON.parse(try XCTUnwrap(try decoder.next()))
        XCTAssertEqual(note["method"], "escape_pressed")
        XCTAssertNil(note["id"], "a notification has no id")

        let refusing = FakeDesktop()
        refusing.refuseKeyboardTap = true
        let refused = makeHandler(refusing)
        _ = try await call(refused, ["jsonrpc": "2.0", "id": 1, "method": "handshake", "params": ["protocol_versions": [1]]])
        let denied = try await call(refused, ["jsonrpc": "2.0", "id": 2, "method": "watch_escape"])
        XCTAssertEqual(denied["error"]?["data"]?["code"], "permission_denied")
        let hint = try XCTUnwrap(denied["error"]?["data"]?["hint"]?.stringValue)
        XCTAssertTrue(hint.contains("Privacy & Security > Input Monitoring"), hint)
    }

    @MainActor
    func testCaptureIDsCountAndPatchCheckSeesChanges() async throws {
        let desktop = FakeDesktop()
        let handler = makeHandler(desktop)
        _ = try await call(handler, ["jsonrpc": "2.0", "id": 1, "method": "handshake", "params": ["protocol_versions": [1]]])
        let first = try await call(handler, ["jsonrpc": "2.0", "id": 2, "method": "capture", "params": ["rect": ["x": 0, "y": 0, "width": 64, "height": 64]]])
        let second = try await call(handler, ["jsonrpc": "2.0", "id": 3, "method": "capture", "params": ["rect": ["x": 0, "y": 0, "width": 64, "height": 64], "format": "png"]])
        XCTAssertEqual(first["result"]?["capture_id"], .int(1))
        XCTAssertEqual(second["result"]?["capture_id"], .int(2))
        XCTAssertEqual(second["result"]?["display"], .null)

        let same = try await call(handler, ["jsonrpc": "2.0", "id": 4, "method": "patch_check", "params": ["x": 10, "y": 10]])
        XCTAssertEqual(same["result"]?["changed"], .bool(false))
        desktop.screenGeneration = 7
        let changed = try await call(handler, ["jsonrpc": "2.0", "id": 5, "method": "patch_check", "params": ["x": 10, "y": 10]])
        XCTAssertEqual(changed["result"]?["changed"], .bool(true))
        XCTAssertEqual(changed["result"]?["differing_pixels"], .int(81))
        XCTAssertEqual(changed["result"]?["max_delta"], .int(7))
        XCTAssertEqual(changed["result"]?["capture_id"], .int(2))
    }

    @MainActor
    func testPermissionsReportsAndRequires() async throws {
        let desktop = FakeDesktop()
        desktop.granted[.accessibility] = false
        desktop.granted[.inputMonitoring] = false
        let handler = makeHandler(desktop)
        _ = try await call(handler, ["jsonrpc": "2.0", "id": 1, "method": "handshake", "params": ["protocol_versions": [1]]])
        let status = try await call(handler, ["jsonrpc": "2.0", "id": 2, "method": "permissions"])
        XCTAssertEqual(status["result"], ["screen_recording": true, "accessibility": false, "input_monitoring": false])
        let denied = try await call(handler, ["jsonrpc": "2.0", "id": 3, "method": "permissions", "params": ["require": ["screen_recording", "accessibility"]]])
        XCTAssertEqual(denied["error"]?["code"], .int(-32011))
        XCTAssertEqual(denied["error"]?["data"]?["code"], "permission_denied")
        let hint = try XCTUnwrap(denied["error"]?["data"]?["hint"]?.stringValue)
        XCTAssertTrue(hint.contains("Privacy & Security > Accessibility"), hint)
        let watch = try await call(handler, ["jsonrpc": "2.0", "id": 5, "method": "permissions", "params": ["require": ["input_monitoring"]]])
        XCTAssertEqual(watch["error"]?["data"]?["code"], "permission_denied")
        let watchHint = try XCTUnwrap(watch["error"]?["data"]?["hint"]?.stringValue)
        XCTAssertTrue(watchHint.contains("Privacy & Security > Input Monitoring"), watchHint)
        let bad = try await call(handler, ["jsonrpc": "2.0", "id": 4, "method": "permissions", "params": ["require": ["camera"]]])
        XCTAssertEqual(bad["error"]?["data"]?["code"], "invalid_params")
    }

    @MainActor
    func testIncludeAppsIsCheckedAndPassedOn() async throws {
        let handler = makeHandler()
        _ = try await call(handler, ["jsonrpc": "2.0", "id": 1, "method": "handshake", "params": ["protocol_versions": [1]]])
        let bad = try await call(handler, ["jsonrpc": "2.0", "id": 2, "method": "capture", "params": ["include_apps": [""]]])
        XCTAssertEqual(bad["error"]?["data"]?["code"], "invalid_params")
        let good = try await call(handler, ["jsonrpc": "2.0", "id": 3, "method": "capture", "params": ["include_apps": ["com.apple.TextEdit"], "width": 32, "height": 18]])
        XCTAssertEqual(good["result"]?["width"], .int(32))
    }

    @MainActor
    func testCaptureSizeLimitsAreCheckedBeforeTheScreen() async throws {
        let desktop = FakeDesktop()
        let handler = makeHandler(desktop)
        _ = try await call(handler, ["jsonrpc": "2.0", "id": 1, "method": "handshake", "params": ["protocol_versions": [1]]])
        let over = try await call(handler, ["jsonrpc": "2.0", "id": 2, "method": "capture", "params": ["width": 16384, "height": 16384]])
        XCTAssertEqual(over["error"]?["data"]?["code"], "invalid_params")
        XCTAssertEqual(desktop.captures, 0, "an over-the-cap size reached the desktop")
        let fine = try await call(handler, ["jsonrpc": "2.0", "id": 3, "method": "capture", "params": ["width": 64, "height": 36]])
        XCTAssertEqual(fine["result"]?["width"], .int(64))
        XCTAssertEqual(desktop.captures, 1)
    }

    @MainActor
    func testAccessibilityAndTeachParamsAreChecked() async throws {
        let desktop = FakeDesktop()
        let handler = makeHandler(desktop)
        _ = try await call(handler, ["jsonrpc": "2.0", "id": 1, "method": "handshake", "params": ["protocol_versions": [1]]])
        let bad: [(String, JSON)] = [
            ("a11y_tree", ["pid": 0]), ("a11y_tree", ["pid": 5, "max_nodes": 0]), ("a11y_element", ["pid": 5]),
            ("a11y_element", ["pid": 5, "ref": ""]), ("a11y_act", ["pid": 5, "ref": "r", "op": "click"]),
            ("a11y_act", ["pid": 5, "ref": "r", "op": "action"]), ("a11y_act", ["pid": 5, "ref": "r", "op": "set_value", "value": "1"]),
            ("teach_show", ["explanation": "x"]), ("teach_show", ["explanation": " ", "next_preview": ""]),
            ("teach_show", ["explanation": "x", "next_preview": "", "anchor": [1, 2]]),
            ("teach_show", ["explanation": "x", "next_preview": "", "step": 3, "total": 2]),
        ]
        for (index, (method, params)) in bad.enumerated() {
            let reply = try await call(handler, ["jsonrpc": "2.0", "id": JSON(index + 2), "method": .string(method), "params": params])
            XCTAssertEqual(reply["error"]?["data"]?["code"], "invalid_params", "\(method) \(params.serializedString())")
        }
        let shown = try await call(handler, ["jsonrpc": "2.0", "id": 100, "method": "teach_show", "params": ["explanation": "Open the File menu", "next_preview": "Save", "anchor": ["x": 10, "y": 20]]])
        XCTAssertNotNil(shown["result"]?["next"]?["w"])
        desktop.teachChoice = "next"
        let polled = try await call(handler, ["jsonrpc": "2.0", "id": 101, "method": "teach_poll"])
        XCTAssertEqual(polled["result"], ["visible": true, "choice": "next"])
        let unavailable = try await call(handler, ["jsonrpc": "2.0", "id": 102, "method": "a11y_tree", "params": ["pid": 5]])
        XCTAssertEqual(unavailable["error"]?["code"], .int(-32012))
    }

    func testEveryErrorCodeHasItsProtocolNumber() {
        let expected: [ErrorCode: Int] = [
            .parseError: -32700, .invalidRequest: -32600, .methodNotFound: -32601, .invalidParams: -32602,
            .internal: -32603, .displayUnavailable: -32001, .outOfBounds: -32002, .noSuchDisplay: -32003,
            .noSuchWindow: -32004, .noCapture: -32005, .clipboardUnavailable: -32006, .unsupported: -32007,
            .handshakeRequired: -32008, .incompatibleProtocol: -32009, .captureFailed: -32010,
            .permissionDenied: -32011, .a11yUnavailable: -32012, .staleElement: -32013,
        ]
        XCTAssertEqual(ErrorCode.allCases.count, expected.count)
        for code in ErrorCode.allCases {
            XCTAssertEqual(code.number, expected[code], code.rawValue)
        }
    }
}
