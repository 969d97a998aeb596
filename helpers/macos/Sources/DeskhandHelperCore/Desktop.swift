import Foundation

/// What the handshake reports about the platform.
public struct PlatformInfo: Equatable {
    /// "macos".
    public var platform: String
    /// The capabilities that work right now (PROTOCOL.md, `handshake`).
    public var capabilities: [String]
    /// The display (session) served, informational; nil when there is none.
    public var display: String?
    /// Informational, platform-specific facts (an object).
    public var extensions: JSON
    /// Set when the display cannot be reached: what failed and what to do.
    public var displayError: String?

    public init(platform: String, capabilities: [String], display: String?, extensions: JSON, displayError: String?) {
        self.platform = platform
        self.capabilities = capabilities
        self.display = display
        self.extensions = extensions
        self.displayError = displayError
    }
}

/// What to capture.
public enum CaptureTarget: Equatable, Sendable {
    /// A display by id; nil means the primary.
    case display(DisplayID?)
    /// A rectangle of the global space.
    case rect(Rect)
}

/// A capture request after its parameters were checked.
public struct CaptureRequest: Equatable, Sendable {
    public var target: CaptureTarget
    /// Windows to leave out of the image. On macOS they are excluded at the
    /// compositor (ScreenCaptureKit never draws them) instead of painted over.
    public var mask: [WindowID]
    /// The paint colour where a platform paints masked windows over.
    public var maskColor: (r: UInt8, g: UInt8, b: UInt8)
    /// When set, only these apps' windows are captured (macOS: bundle ids;
    /// an `SCContentFilter` that includes just them), so a window of any
    /// other app, even one that opens between the window list and the
    /// capture, never reaches the image.
    public var includeApps: [String]?

    public init(
        target: CaptureTarget, mask: [WindowID], maskColor: (r: UInt8, g: UInt8, b: UInt8),
        includeApps: [String]?
    ) {
        self.target = target
        self.mask = mask
        self.maskColor = maskColor
        self.includeApps = includeApps
    }

    public static func == (lhs: CaptureRequest, rhs: CaptureRequest) -> Bool {
        lhs.target == rhs.target && lhs.mask == rhs.mask && lhs.maskColor == rhs.maskColor
            && lhs.includeApps == rhs.includeApps
    }
}

/// The pixels a capture produced, before scaling and encoding.
public struct CapturedFrame {
    /// Native pixels (backing resolution) of `source`, already filtered.
    public var pixels: PixelBuffer
    /// The rectangle of the global space the pixels show, in points.
    public var source: Rect
    /// The display id, nil for a rectangle capture.
    public var display: DisplayID?
    /// The requested mask windows that were visible in `source`.
    public var masked: [WindowID]
    /// How the pixels were read ("screencapturekit").
    public var method: String
    /// Whatever the desktop needs to capture a patch the same way again
    /// (on macOS, the content filter), opaque to the handler.
    public var recaptureContext: AnyObject?

    public init(
        pixels: PixelBuffer, source: Rect, display: DisplayID?, masked: [WindowID], method: String,
        recaptureContext: AnyObject?
    ) {
        self.pixels = pixels
        self.source = source
        self.display = display
        self.masked = masked
        self.method = method
        self.recaptureContext = recaptureContext
    }
}

/// An operating-system permission the helper depends on.
public enum Permission: String, CaseIterable, Sendable {
    /// macOS Screen Recording (TCC `kTCCServiceScreenCapture`).
    case screenRecording = "screen_recording"
    /// macOS Accessibility (TCC `kTCCServiceAccessibility`).
    case accessibility = "accessibility"
    /// macOS Input Monitoring (TCC `kTCCServiceListenEvent`), which the
    /// Escape watch's keyboard tap needs. Optional: without it everything
    /// works except the user's Escape stopping a turn.
    case inputMonitoring = "input_monitoring"
}

/// The desktop the handler serves: displays, pixels, windows, clipboard and
/// app hiding. The macOS implementation is `MacDesktop`; tests use a fake.
/// Every method throws `ProtocolErrorConvertible` errors for failures the
/// protocol names; anything else is reported as `internal`.
@MainActor
public protocol Desktop: Assistive {
    func platformInfo() async -> PlatformInfo
    func displays() async throws -> [Display]
    func capture(_ request: CaptureRequest) async throws -> CapturedFrame
    /// Live pixels of `rect` (points, inside `frame.source`), captured the
    /// way `frame` was and delivered at `pixelSize`.
    func recapture(_ rect: Rect, pixelSize: Size, like frame: CapturedFrame) async throws -> PixelBuffer
    func windows(includeHidden: Bool) async throws -> WindowList
    func window(at point: Point) async throws -> Window?
    func readClipboard() async throws -> String
    func writeClipboard(_ text: String) async throws
    /// Hides the given windows; returns the ones that changed.
    func hide(_ windows: [WindowID]) async throws -> [WindowID]
    /// Shows the given windows again; returns the ones that changed.
    func restore(_ windows: [WindowID]) async throws -> [WindowID]
    /// Whether each permission is granted, checked without prompting.
    func permissionStatus() async -> [Permission: Bool]
    /// The `permission_denied` error for a missing permission, with a hint
    /// that names the settings pane.
    func permissionDenied(_ permission: Permission) -> ProtocolError
    /// Starts watching the keyboard (macOS: a listen-only event tap) and
    /// calls `onKeyDown`, on the main actor, with every key press from then
    /// on, deskhand's own included: the handler tells them apart
    /// (`EscapeWatch`). A second call only replaces `onKeyDown`. Throws
    /// `permission_denied`, naming the pane, when the system refuses the tap.
    func watchKeyboard(_ onKeyDown: @escaping @MainActor (KeyDown) -> Void) throws
}

/// Scales and encodes pixels (macOS: vImage and ImageIO).
public protocol ImageEncoder {
    /// `pixels` scaled to `size` and encoded; JPEG `quality` is 1...100.
    func encode(_ pixels: PixelBuffer, size: Size, format: ImageFormat, quality: Int) throws -> [UInt8]
}

/// `a11y_tree` after its parameters were checked (helpers/PROTOCOL.md,
/// "Accessibility tree").
public struct A11yTreeRequest: Equatable, Sendable {
    public var pid: Int32
    /// The window server's id of the wanted window; macOS matches it to an
    /// accessibility window by geometry, since AX does not expose the id.
    public var window: WindowID?
    public var title: String?
    public var maxNodes: Int
    public var maxDepth: Int
    public var deadlineMilliseconds: Int

    public init(pid: Int32, window: WindowID?, title: String?, maxNodes: Int, maxDepth: Int, deadlineMilliseconds: Int) {
        self.pid = pid
        self.window = window
        self.title = title
        self.maxNodes = maxNodes
        self.maxDepth = maxDepth
        self.deadlineMilliseconds = deadlineMilliseconds
    }
}

/// `teach_show` after its parameters were checked.
public struct TeachRequest: Equatable, Sendable {
    public var explanation: String
    public var nextPreview: String
    /// Global logical coordinates; nil places the overlay on the main display.
    public var anchor: Point?
    public var step: Int?
    public var total: Int?

    public init(explanation: String, nextPreview: String, anchor: Point?, step: Int?, total: Int?) {
        self.explanation = explanation
        self.nextPreview = nextPreview
        self.anchor = anchor
        self.step = step
        self.total = total
    }
}

/// The accessibility tree and the teaching overlay (the wave-2 methods).
/// Results are protocol JSON: their shapes are PROTOCOL.md's, built where
/// the platform's facts are.
@MainActor
public protocol Assistive: AnyObject {
    /// `key_layout`: the active keyboard layout's characters by key code.
    func keyLayout() async throws -> JSON
    func a11yApps() async throws -> JSON
    func a11yTree(_ request: A11yTreeRequest) async throws -> JSON
    func a11yElement(pid: Int32, ref: String) async throws -> JSON
    func a11yAct(pid: Int32, ref: String, _ operation: A11yOperation) async throws
    func teachShow(_ request: TeachRequest) async throws -> JSON
    func teachPoll() async throws -> JSON
    func teachHide() async throws
    /// `indicator`: shows (visible) or takes down the sign that deskhand
    /// is in control; `{"visible": bool, "bounds": Rect | null}`.
    func indicator(visible: Bool) async throws -> JSON
}
