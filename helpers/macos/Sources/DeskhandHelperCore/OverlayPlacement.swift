/// Where the teaching overlay goes, in Cocoa screen coordinates (origin at
/// the bottom left, y up): the maths of `TeachOverlay.place`, apart from
/// AppKit so that it is tested on every platform.
public enum OverlayPlacement {
    /// A screen's visible frame (without the menu bar and the Dock).
    public struct Frame: Equatable, Sendable {
        public var minX, minY, maxX, maxY: Double

        public init(minX: Double, minY: Double, maxX: Double, maxY: Double) {
            self.minX = minX
            self.minY = minY
            self.maxX = maxX
            self.maxY = maxY
        }
    }

    /// Margin from the screen's corner when there is no anchor.
    public static let cornerMargin = 24.0

    /// The overlay's origin: below and to the right of the anchor, `gap`
    /// away, flipped to the left or above where it would leave the frame;
    /// the top right corner without an anchor; always kept inside `visible`.
    public static func place(
        width: Double, height: Double, anchor: (x: Double, y: Double)?, visible: Frame, gap: Double
    ) -> (x: Double, y: Double) {
        var x: Double
        var y: Double
        if let anchor {
            x = anchor.x + gap
            y = anchor.y - gap - height
            if x + width > visible.maxX { x = anchor.x - gap - width }
            if y < visible.minY { y = anchor.y + gap }
        } else {
            x = visible.maxX - width - cornerMargin
            y = visible.maxY - height - cornerMargin
        }
        x = min(max(x, visible.minX), visible.maxX - width)
        y = min(max(y, visible.minY), visible.maxY - height)
        return (x, y)
    }
}
