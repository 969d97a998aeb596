import AppKit
import CoreGraphics
import DeskhandHelperCore
import Foundation

/// The teaching tooltip behind `teach_show`, `teach_poll` and `teach_hide`
/// (helpers/PROTOCOL.md, "Teaching overlay"): a non-activating NSPanel
/// beside the anchor with the explanation, a preview of the next step and
/// Next / Exit buttons.
///
/// - It never takes the user's focus: a non-activating panel that becomes
///   key only if a control needs it, so the app the user works in stays
///   frontmost and keeps the keyboard.
/// - It is never in a capture: `sharingType = .none`, and the capturer
///   leaves the helper's own windows out of every content filter (macOS 15
///   no longer honours sharingType for ScreenCaptureKit), so the pixels under
///   it are the desktop's.
/// - The model cannot press its buttons. A click counts only when its
///   events do not carry the marker deskhand's own Quartz events carry in
///   `eventSourceUserData` (supervisor/desktop/keycodes/quartz_darwin.go) and were
///   not posted by the supervisor process (`eventSourceUnixProcessID`). A
///   model's click at the button's position is an event deskhand posted,
///   so it does nothing.
/// - Escape exits, while the pointer is over the panel (a global key
///   monitor, which the Accessibility grant allows) or the panel is key.
@MainActor
final class TeachOverlay {
    /// What deskhand's own events carry in `eventSourceUserData`, so the
    /// overlay (and anything else that cares) can tell them from the user's.
    /// supervisor/desktop/keycodes/quartz_darwin.go sets the same value.
    static let syntheticMarker: Int64 = 0x6473_6b68_616e_6401
    static let maxWidth: CGFloat = 360
    static let margin: CGFloat = 14
    static let anchorGap: CGFloat = 16

    private var panel: NSPanel?
    private var choice: String?
    private var monitors: [Any] = []
    private let log: Log
    /// Called when the overlay's windows change, so cached capture content
    /// that predates them is dropped.
    var onChange: @MainActor () -> Void = {}

    init(log: Log) {
        self.log = log
    }

    func show(_ request: TeachRequest) throws -> JSON {
        hide()
        let application = NSApplication.shared
        if application.activationPolicy() != .accessory {
            // No Dock icon and no menu bar, but windows may be shown.
            _ = application.setActivationPolicy(.accessory)
        }
        let content = NSStackView()
        content.orientation = .vertical
        content.alignment = .leading
        content.spacing = 8
        content.edgeInsets = NSEdgeInsets(top: Self.margin, left: Self.margin, bottom: Self.margin, right: Self.margin)

        if let step = request.step {
            let counter = NSTextField(labelWithString: request.total.map { "Step \(step) of \($0)" } ?? "Step \(step)")
            counter.font = .systemFont(ofSize: NSFont.smallSystemFontSize, weight: .semibold)
            counter.textColor = .secondaryLabelColor
            content.addArrangedSubview(counter)
        }
        let explanation = NSTextField(wrappingLabelWithString: request.explanation)
        explanation.font = .systemFont(ofSize: NSFont.systemFontSize)
        explanation.preferredMaxLayoutWidth = Self.maxWidth - 2 * Self.margin
        content.addArrangedSubview(explanation)
        if !request.nextPreview.isEmpty {
            let preview = NSTextField(wrappingLabelWithString: "Next: \(request.nextPreview)")
            preview.font = .systemFont(ofSize: NSFont.smallSystemFontSize)
            preview.textColor = .secondaryLabelColor
            preview.preferredMaxLayoutWidth = Self.maxWidth - 2 * Self.margin
            content.addArrangedSubview(preview)
        }
        let exit = HumanOnlyButton(title: "Exit") { [weak self] in self?.choose("exit") }
        let next = HumanOnlyButton(title: "Next") { [weak self] in self?.choose("next") }
        next.keyEquivalent = ""
        next.bezelColor = .controlAccentColor
        let buttons = NSStackView(views: [exit, next])
        buttons.orientation = .horizontal
        buttons.spacing = 8
        content.addArrangedSubview(buttons)

        let size = content.fittingSize
        let width = min(max(size.width, 220), Self.maxWidth)
        let height = size.height
        let frame = Self.place(size: CGSize(width: width, height: height), anchor: request.anchor)

        let panel = NSPanel(
            contentRect: frame, styleMask: [.nonactivatingPanel, .borderless], backing: .buffered, defer: false)
        panel.isFloatingPanel = true
        panel.level = .statusBar
        panel.becomesKeyOnlyIfNeeded = true
        panel.hidesOnDeactivate = false
        panel.isReleasedWhenClosed = false
        panel.sharingType = .none
        panel.hasShadow = true
        panel.isOpaque = false
        panel.backgroundColor = .clear
        panel.collectionBehavior = [.canJoinAllSpaces, .fullScreenAuxiliary, .stationary, .ignoresCycle]
        let background = NSVisualEffectView(frame: NSRect(origin: .zero, size: frame.size))
        background.material = .popover
        background.state = .active
        background.wantsLayer = true
        background.layer?.cornerRadius = 10
        background.layer?.masksToBounds = true
        content.frame = background.bounds
        content.autoresizingMask = [.width, .height]
        background.addSubview(content)
        panel.contentView = background
        panel.orderFrontRegardless()
        panel.layoutIfNeeded()
        self.panel = panel
        choice = nil
        watchEscape(panel)
        onChange()
        log.debug("teach overlay shown at \(frame)")
        return [
            "bounds": Self.global(frame),
            "next": Self.global(Self.screenFrame(of: next, in: panel)),
            "exit": Self.global(Self.screenFrame(of: exit, in: panel)),
        ]
    }

    func poll() -> JSON {
        ["visible": .bool(panel?.isVisible ?? false), "choice": .optional(choice) { .string($0) }]
    }

    func hide() {
        for monitor in monitors {
            NSEvent.removeMonitor(monitor)
        }
        monitors = []
        if let panel {
            panel.orderOut(nil)
            self.panel = nil
            onChange()
        }
        choice = nil
    }

    /// The first choice stands until the next show or hide.
    private func choose(_ value: String) {
        guard panel != nil, choice == nil else { return }
        choice = value
        log.info("teach overlay: the user chose \(value)")
    }

    private func watchEscape(_ panel: NSPanel) {
        let escape: UInt16 = 53  // kVK_Escape
        let global = NSEvent.addGlobalMonitorForEvents(matching: .keyDown) { [weak self] event in
            MainActor.assumeIsolated {
                guard let self, let panel = self.panel, event.keyCode == escape, Self.isHuman(event) else { return }
                if panel.frame.contains(NSEvent.mouseLocation) {
                    self.choose("exit")
                }
            }
        }
        let local = NSEvent.addLocalMonitorForEvents(matching: .keyDown) { [weak self] event in
            MainActor.assumeIsolated {
                if let self, event.keyCode == escape, Self.isHuman(event), event.window === self.panel {
                    self.choose("exit")
                    return nil
                }
                return event
            }
        }
        monitors = [global, local].compactMap { $0 }
    }

    /// Whether an event is not deskhand's own: it lacks the marker every
    /// event deskhand's Quartz input posts carries, and it was not posted
    /// by the supervisor (the helper's parent, which posts in process) or
    /// the helper. Two independent checks, so a marker lost on the way (an
    /// event tap that rewrites events) still does not let the model press
    /// a button.
    static func isHuman(_ event: NSEvent) -> Bool {
        guard let cgEvent = event.cgEvent else { return false }
        if cgEvent.getIntegerValueField(.eventSourceUserData) == syntheticMarker {
            return false
        }
        let poster = cgEvent.getIntegerValueField(.eventSourceUnixProcessID)
        return poster != Int64(getppid()) && poster != Int64(getpid())
    }

    /// The panel's frame (Cocoa screen coordinates, origin bottom-left of
    /// the main screen) beside the anchor, below and to the right where it
    /// fits, and kept inside the visible frame of the anchor's screen.
    static func place(size: CGSize, anchor: Point?) -> NSRect {
        let screens = NSScreen.screens
        let mainHeight = screens.first?.frame.height ?? 0
        let cocoaAnchor = anchor.map { CGPoint(x: CGFloat($0.x), y: mainHeight - CGFloat($0.y)) }
        let screen =
            cocoaAnchor.flatMap { point in screens.first(where: { NSMouseInRect(point, $0.frame, false) }) }
            ?? NSScreen.main ?? screens.first
        let visible = screen?.visibleFrame ?? NSRect(x: 0, y: 0, width: 1440, height: 900)
        let placed = OverlayPlacement.place(
            width: size.width, height: size.height,
            anchor: cocoaAnchor.map { (x: Double($0.x), y: Double($0.y)) },
            visible: OverlayPlacement.Frame(
                minX: visible.minX, minY: visible.minY, maxX: visible.maxX, maxY: visible.maxY),
            gap: anchorGap)
        return NSRect(x: placed.x, y: placed.y, width: size.width, height: size.height)
    }

    private static func screenFrame(of view: NSView, in panel: NSPanel) -> NSRect {
        panel.convertToScreen(view.convert(view.bounds, to: nil))
    }

    /// A Cocoa screen rectangle as `{x, y, w, h}` in global logical
    /// coordinates (points, origin top-left of the main display).
    static func global(_ rect: NSRect) -> JSON {
        let mainHeight = NSScreen.screens.first?.frame.height ?? 0
        return [
            "x": JSON(Int(rect.minX.rounded())), "y": JSON(Int((mainHeight - rect.maxY).rounded())),
            "w": JSON(Int(rect.width.rounded())), "h": JSON(Int(rect.height.rounded())),
        ]
    }
}

/// A button that acts only on a click from the hardware: NSButton's own
/// tracking is bypassed, so no synthetic press (a posted CGEvent, or
/// accessibility's AXPress, which performClick would honour) reaches the
/// action.
@MainActor
final class HumanOnlyButton: NSButton {
    private let onPress: @MainActor () -> Void
    private var pressedByHuman = false

    init(title: String, onPress: @escaping @MainActor () -> Void) {
        self.onPress = onPress
        super.init(frame: .zero)
        self.title = title
        bezelStyle = .rounded
        setButtonType(.momentaryPushIn)
        // The panel must not take the user's keyboard to draw a focus ring.
        refusesFirstResponder = true
    }

    @available(*, unavailable)
    required init?(coder: NSCoder) {
        fatalError("HumanOnlyButton is not loaded from a nib")
    }

    override func mouseDown(with event: NSEvent) {
        pressedByHuman = TeachOverlay.isHuman(event)
        if pressedByHuman {
            highlight(true)
        }
    }

    override func mouseUp(with event: NSEvent) {
        highlight(false)
        let inside = bounds.contains(convert(event.locationInWindow, from: nil))
        if pressedByHuman && inside && TeachOverlay.isHuman(event) {
            onPress()
        }
        pressedByHuman = false
    }

    /// Accessibility presses and keyboard activation do nothing: the choice
    /// is the user's hand on the pointer.
    override func performClick(_ sender: Any?) {}

    override func accessibilityPerformPress() -> Bool { false }
}
