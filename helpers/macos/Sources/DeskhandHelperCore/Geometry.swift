import Foundation

/// The rules for sizes and patches, kept apart from any capture API so they
/// are the same on every platform and testable on their own.
public enum Geometry {
    /// Largest output side, and largest output area (8K UHD fits).
    public static let maxOutputSide = 16384
    public static let maxOutputPixels = 1 << 25

    /// The output size for a capture: `native` when neither side is given,
    /// else both, each 1...16384 and at most 2^25 pixels in all.
    public static func outputSize(width: Int?, height: Int?, native: Size) throws -> Size {
        switch (width, height) {
        case (nil, nil):
            return native
        case (let width?, let height?):
            for (name, value) in [("width", width), ("height", height)] where !(1...maxOutputSide).contains(value) {
                throw ProtocolError.invalidParams(
                    "capture: \"\(name)\" must be an integer in 1...\(maxOutputSide), got \(value)")
            }
            if width * height > maxOutputPixels {
                throw ProtocolError.invalidParams(
                    "capture: the output \(width)x\(height) is over \(maxOutputPixels) pixels")
            }
            return Size(width: width, height: height)
        default:
            throw ProtocolError.invalidParams(
                "capture: give both \"width\" and \"height\", or neither for the native size")
        }
    }

    /// The `size`×`size` patch centred on (`x`, `y`), if it lies inside
    /// `within` (the last capture's source).
    public static func patchRect(x: Int, y: Int, size: Int, within: Rect) throws -> Rect {
        let half = size / 2
        let rect = Rect(x: x - half, y: y - half, width: size, height: size)
        guard within.contains(rect) else {
            throw ProtocolError.outOfBounds(
                "the \(size)x\(size) patch around (\(x), \(y)) is not inside the last capture (\(within))",
                hint: "Check a point at least size/2 points inside the last capture's source rectangle, or capture that area first.")
        }
        return rect
    }

    /// The pixel rectangle of `rect` (points) inside a capture of `source`
    /// (points) that holds `pixels` pixels: the same scale on both axes is
    /// not assumed, since a capture may be stretched to any output size.
    public static func pixelRect(of rect: Rect, in source: Rect, pixels: Size) -> (x: Int, y: Int, width: Int, height: Int) {
        let scaleX = Double(pixels.width) / Double(source.width)
        let scaleY = Double(pixels.height) / Double(source.height)
        let x0 = Int((Double(rect.x - source.x) * scaleX).rounded(.down))
        let y0 = Int((Double(rect.y - source.y) * scaleY).rounded(.down))
        let x1 = Int((Double(rect.maxX - source.x) * scaleX).rounded(.up))
        let y1 = Int((Double(rect.maxY - source.y) * scaleY).rounded(.up))
        let clampedX0 = min(max(x0, 0), pixels.width - 1)
        let clampedY0 = min(max(y0, 0), pixels.height - 1)
        let clampedX1 = min(max(x1, clampedX0 + 1), pixels.width)
        let clampedY1 = min(max(y1, clampedY0 + 1), pixels.height)
        return (clampedX0, clampedY0, clampedX1 - clampedX0, clampedY1 - clampedY0)
    }
}

/// The outcome of comparing a patch of the last capture with the screen.
public struct PatchComparison: Equatable, Sendable {
    public var differingPixels: Int
    public var maxDelta: Int

    public init(differingPixels: Int, maxDelta: Int) {
        self.differingPixels = differingPixels
        self.maxDelta = maxDelta
    }

    /// Compares two buffers of the same size pixel by pixel: a pixel differs
    /// when its largest channel difference is over `tolerance`.
    public static func compare(_ before: PixelBuffer, _ after: PixelBuffer, tolerance: Int) -> PatchComparison? {
        guard before.width == after.width, before.height == after.height else {
            return nil
        }
        var differing = 0
        var maxDelta = 0
        for row in 0..<before.height {
            let a = row * before.bytesPerRow
            let b = row * after.bytesPerRow
            for column in 0..<before.width {
                var delta = 0
                for channel in 0..<3 {
                    let difference = abs(
                        Int(before.bytes[a + column * 4 + channel]) - Int(after.bytes[b + column * 4 + channel]))
                    delta = max(delta, difference)
                }
                maxDelta = max(maxDelta, delta)
                if delta > tolerance {
                    differing += 1
                }
            }
        }
        return PatchComparison(differingPixels: differing, maxDelta: maxDelta)
    }
}
