import CoreGraphics
import CoreVideo
import DeskhandHelperCore
import Foundation
import ScreenCaptureKit

/// What `recapture` needs to read a patch exactly the way a capture was
/// read: the same content filter (so excluded windows stay excluded) on the
/// same display.
final class RecaptureContext {
    let filter: SCContentFilter
    let displayOrigin: Point

    init(filter: SCContentFilter, displayOrigin: Point) {
        self.filter = filter
        self.displayOrigin = displayOrigin
    }
}

/// Captures with `SCScreenshotManager.captureImage` through a content filter
/// built per request:
///
/// - with `include_apps`, `SCContentFilter(display:including:exceptingWindows:)`
///   over the running apps with those bundle ids: only their windows are
///   composited, so an unapproved app never reaches the pixels, even a
///   window it opens after the supervisor last listed windows (the desktop
///   picture, Dock and menu bar are left out too);
/// - otherwise `SCContentFilter(display:excludingWindows:)`, leaving out the
///   `mask` windows.
///
/// In both cases the `mask` windows are excluded at the compositor, not
/// painted over: what lies behind them shows instead.
@MainActor
final class ScreenCapturer {
    private let content: ShareableContentCache
    private let log: Log

    init(content: ShareableContentCache, log: Log) {
        self.content = content
        self.log = log
    }

    func capture(_ request: CaptureRequest, displays: [Display]) async throws -> CapturedFrame {
        let display: Display
        let source: Rect
        switch request.target {
        case .display(let wanted):
            if let wanted {
                guard let match = displays.first(where: { $0.id == wanted }) else {
                    throw DesktopError.noSuchDisplay(wanted, known: displays)
                }
                display = match
            } else {
                guard let primary = displays.first(where: \.primary) ?? displays.first else {
                    throw DesktopError.noDisplays
                }
                display = primary
            }
            source = display.bounds
        case .rect(let rect):
            display = try DisplayList.display(containing: rect, in: displays)
            source = rect
        }

        var shareable = try await content.current()
        if !shareable.displays.contains(where: { $0.displayID == display.id }) {
            // A display that just appeared may postdate the cached content.
            content.invalidate()
            shareable = try await content.current()
        }
        guard let scDisplay = shareable.displays.first(where: { $0.displayID == display.id }) else {
            throw DesktopError.displayNotShareable(display.id)
        }

        let maskSet = Set(request.mask)
        // The helper's own windows (the teaching overlay) are never in a
        // capture: the pixels under them are the desktop's.
        let ownPID = ProcessInfo.processInfo.processIdentifier
        let excluded = shareable.windows.filter {
            maskSet.contains($0.windowID) || $0.owningApplication?.processID == ownPID
        }
        let filter: SCContentFilter
        if let bundleIDs = request.includeApps {
            let wanted = Set(bundleIDs.map { $0.lowercased() })
            let apps = shareable.applications.filter { wanted.contains($0.bundleIdentifier.lowercased()) }
            filter = SCContentFilter(display: scDisplay, including: apps, exceptingWindows: excluded)
            log.debug("capture filter: \(apps.count) of \(bundleIDs.count) approved apps running, \(excluded.count) windows excluded")
        } else {
            filter = SCContentFilter(display: scDisplay, excludingWindows: excluded)
        }

        // Masked: the requested windows that were on screen over the source,
        // in request order. (ScreenCaptureKit's window frames use the same
        // global top-left coordinates as CGWindowList.)
        let sourceRect = CGRect(x: source.x, y: source.y, width: source.width, height: source.height)
        let visible = Set(excluded.filter { $0.isOnScreen && $0.frame.intersects(sourceRect) }.map(\.windowID))
        var masked: [WindowID] = []
        for id in request.mask where visible.contains(id) && !masked.contains(id) {
            masked.append(id)
        }

        let scale = Self.scale(of: filter, display: display)
        let pixelSize = Size(
            width: max(1, Int((Double(source.width) * scale).rounded())),
            height: max(1, Int((Double(source.height) * scale).rounded())))
        let local = Rect(
            x: source.x - display.origin.x, y: source.y - display.origin.y, width: source.width, height: source.height)
        let pixels = try await grab(filter: filter, localRect: local, pixelSize: pixelSize)
        let isRect: Bool
        if case .rect = request.target { isRect = true } else { isRect = false }
        return CapturedFrame(
            pixels: pixels,
            source: source,
            display: isRect ? nil : display.id,
            masked: masked,
            method: "screencapturekit",
            recaptureContext: RecaptureContext(filter: filter, displayOrigin: display.origin))
    }

    func recapture(_ rect: Rect, pixelSize: Size, like frame: CapturedFrame) async throws -> PixelBuffer {
        guard let context = frame.recaptureContext as? RecaptureContext else {
            throw ProtocolError.internal("the last capture has no ScreenCaptureKit filter to recapture with")
        }
        // The same preflight and confirmation as a capture, so a grant
        // revoked since then is reported as such.
        _ = try await content.current()
        let local = Rect(
            x: rect.x - context.displayOrigin.x, y: rect.y - context.displayOrigin.y, width: rect.width,
            height: rect.height)
        return try await grab(filter: context.filter, localRect: local, pixelSize: pixelSize)
    }

    /// Backing pixels per point for the filter's content: the display's
    /// scale (2 on Retina), as ScreenCaptureKit reports it.
    private static func scale(of filter: SCContentFilter, display: Display) -> Double {
        let reported = Double(filter.pointPixelScale)
        return reported > 0 ? reported : max(display.scale, 1)
    }

    /// One screenshot of `localRect` (points, relative to the display's
    /// top-left) delivered at `pixelSize`, converted to RGBX.
    private func grab(filter: SCContentFilter, localRect: Rect, pixelSize: Size) async throws -> PixelBuffer {
        let configuration = SCStreamConfiguration()
        configuration.sourceRect = CGRect(
            x: localRect.x, y: localRect.y, width: localRect.width, height: localRect.height)
        configuration.width = pixelSize.width
        configuration.height = pixelSize.height
        configuration.scalesToFit = false
        configuration.showsCursor = false
        configuration.captureResolution = .best
        configuration.shouldBeOpaque = true
        configuration.pixelFormat = kCVPixelFormatType_32BGRA
        configuration.colorSpaceName = CGColorSpace.sRGB
        let started = Date()
        let image: CGImage
        do {
            image = try await SCScreenshotManager.captureImage(contentFilter: filter, configuration: configuration)
        } catch {
            content.invalidate()
            throw ShareableContentCache.classify(error)
        }
        let grabbed = Date()
        let pixels = try PixelConversion.rgbx(from: image, size: pixelSize)
        log.debug(
            "grab \(localRect) -> \(image.width)x\(image.height): capture \(String(format: "%.2f", grabbed.timeIntervalSince(started) * 1000)) ms, convert \(String(format: "%.2f", Date().timeIntervalSince(grabbed) * 1000)) ms"
        )
        return pixels
    }
}
