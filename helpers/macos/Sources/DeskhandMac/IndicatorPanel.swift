import AppKit
import DeskhandHelperCore
import Foundation

/// The sign that deskhand is in control behind `indicator`
/// (helpers/PROTOCOL.md, "Control indicator"): a small badge at the top
/// centre of the main screen, "deskhand is in control — press Escape to
/// stop".
///
/// - It never takes input: `ignoresMouseEvents`, so every click where it is
///   reaches the app under it, and it is a non-activating panel that never
///   becomes key.
/// - It is never in a capture, as the teaching tooltip: `sharingType =
///   .none`, and the capturer leaves the helper's own windows out of every
///   content filter; `windows` and `window_at` leave out the helper's own
///   windows too.
@MainActor
final class IndicatorPanel {
    static let text = "deskhand is in control — press Escape to stop"
    /// The badge's fill, as on Linux.
    static let fill = NSColor(srgbRed: 0xC8 / 255, green: 0x1D / 255, blue: 0x6B / 255, alpha: 1)

    private var panel: NSPanel?
    private let log: Log
    /// Called when the panel is shown or hidden, so cached capture content
    /// that predates it is dropped.
    var onChange: @MainActor () -> Void = {}

    init(log: Log) {
        self.log = log
    }

    /// Shows the badge (once) and returns its frame in AppKit coordinates.
    func show() -> NSRect {
        if let panel {
            return panel.frame
        }
        let application = NSApplication.shared
        if application.activationPolicy() != .accessory {
            _ = application.setActivationPolicy(.accessory)
        }
        let label = NSTextField(labelWithString: Self.text)
        label.font = .systemFont(ofSize: NSFont.smallSystemFontSize, weight: .medium)
        label.textColor = .white
        let size = label.fittingSize
        let padding = NSSize(width: 10, height: 4)
        let width = size.width + 2 * padding.width
        let height = size.height + 2 * padding.height
        let screen = NSScreen.screens.first?.frame ?? .zero
        let frame = NSRect(x: screen.midX - width / 2, y: screen.maxY - height, width: width, height: height)

        let panel = NSPanel(
            contentRect: frame, styleMask: [.nonactivatingPanel, .borderless], backing: .buffered, defer: false)
        panel.isFloatingPanel = true
        panel.level = .statusBar
        panel.ignoresMouseEvents = true
        panel.hidesOnDeactivate = false
        panel.isReleasedWhenClosed = false
        panel.sharingType = .none
        panel.hasShadow = false
        panel.backgroundColor = Self.fill
        panel.collectionBehavior = [.canJoinAllSpaces, .fullScreenAuxiliary, .stationary, .ignoresCycle]
        label.frame = NSRect(origin: NSPoint(x: padding.width, y: padding.height), size: size)
        let content = NSView(frame: NSRect(origin: .zero, size: frame.size))
        content.addSubview(label)
        panel.contentView = content
        panel.orderFrontRegardless()
        self.panel = panel
        onChange()
        log.debug("indicator shown at \(frame)")
        return frame
    }

    func hide() {
        guard let panel else { return }
        panel.orderOut(nil)
        self.panel = nil
        onChange()
    }
}
