import Foundation

/// A window id (X11 window; macOS `CGWindowID`).
public typealias WindowID = UInt32
/// A display id (macOS `CGDirectDisplayID`).
public typealias DisplayID = UInt32

public struct Point: Equatable, Hashable, Sendable {
    public var x: Int
    public var y: Int

    public init(x: Int, y: Int) {
        self.x = x
        self.y = y
    }

    public var json: JSON { ["x": JSON(x), "y": JSON(y)] }
}

public struct Size: Equatable, Hashable, Sendable {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public var json: JSON { ["width": JSON(width), "height": JSON(height)] }
}

/// A rectangle in the global logical space: points, origin at the top-left
/// of the main display (PROTOCOL.md, "Types").
public struct Rect: Equatable, Hashable, Sendable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var size: Size { Size(width: width, height: height) }
    public var maxX: Int { x + width }
    public var maxY: Int { y + height }
    public var isEmpty: Bool { width <= 0 || height <= 0 }

    public func contains(_ point: Point) -> Bool {
        point.x >= x && point.y >= y && point.x < maxX && point.y < maxY
    }

    public func contains(_ other: Rect) -> Bool {
        !other.isEmpty && other.x >= x && other.y >= y && other.maxX <= maxX && other.maxY <= maxY
    }

    /// The overlap of two rectangles, nil when they do not overlap.
    public func intersection(_ other: Rect) -> Rect? {
        let x0 = max(x, other.x)
        let y0 = max(y, other.y)
        let x1 = min(maxX, other.maxX)
        let y1 = min(maxY, other.maxY)
        guard x1 > x0, y1 > y0 else { return nil }
        return Rect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    /// `x,y WxH`, the form error messages use.
    public var description: String { "\(x),\(y) \(width)x\(height)" }

    public var json: JSON {
        ["x": JSON(x), "y": JSON(y), "width": JSON(width), "height": JSON(height)]
    }
}

/// A monitor (PROTOCOL.md, `displays`).
public struct Display: Equatable, Sendable {
    public var id: DisplayID
    public var name: String
    public var origin: Point
    /// Size in points.
    public var logical: Size
    /// Size in backing pixels.
    public var physical: Size
    /// Backing pixels per point.
    public var scale: Double
    public var primary: Bool
    /// Physical size in millimetres.
    public var mm: Size

    public init(
        id: DisplayID, name: String, origin: Point, logical: Size, physical: Size, scale: Double,
        primary: Bool, mm: Size
    ) {
        self.id = id
        self.name = name
        self.origin = origin
        self.logical = logical
        self.physical = physical
        self.scale = scale
        self.primary = primary
        self.mm = mm
    }

    public var bounds: Rect {
        Rect(x: origin.x, y: origin.y, width: logical.width, height: logical.height)
    }

    public var json: JSON {
        [
            "id": JSON(id),
            "name": .string(name),
            "origin": origin.json,
            "logical": logical.json,
            "physical": physical.json,
            "scale": .double(scale),
            "primary": .bool(primary),
            "mm": mm.json,
        ]
    }
}

/// An application's identity (PROTOCOL.md, "Types"). On macOS `bundleID`
/// is the identity the safety layer keys on; `instance`, `class` and
/// `desktopID` are Linux-only and always null here.
public struct App: Equatable, Hashable, Sendable {
    public var pid: Int32?
    public var name: String
    public var exe: String?
    public var bundleID: String?

    public init(pid: Int32?, name: String, exe: String?, bundleID: String?) {
        self.pid = pid
        self.name = name
        self.exe = exe
        self.bundleID = bundleID
    }

    public var json: JSON {
        [
            "pid": .optional(pid) { .int(Int64($0)) },
            "name": .string(name),
            "instance": .null,
            "class": .null,
            "exe": .optional(exe) { .string($0) },
            "desktop_id": .null,
            "bundle_id": .optional(bundleID) { .string($0) },
        ]
    }
}

/// A top-level window (PROTOCOL.md, `windows`).
public struct Window: Equatable, Sendable {
    public var id: WindowID
    public var title: String
    public var app: App
    public var bounds: Rect
    public var client: Rect
    public var minimized: Bool
    public var hidden: Bool
    public var focused: Bool
    /// The virtual desktop; macOS Spaces have no public API, so nil there.
    public var desktop: Int?
    /// A window the window manager does not manage (PROTOCOL.md, `windows`):
    /// on macOS, one above the normal window layer (menus, popovers,
    /// tooltips, panels of other levels).
    public var overrideRedirect: Bool

    public init(
        id: WindowID, title: String, app: App, bounds: Rect, client: Rect, minimized: Bool, hidden: Bool,
        focused: Bool, desktop: Int?, overrideRedirect: Bool = false
    ) {
        self.id = id
        self.title = title
        self.app = app
        self.bounds = bounds
        self.client = client
        self.minimized = minimized
        self.hidden = hidden
        self.focused = focused
        self.desktop = desktop
        self.overrideRedirect = overrideRedirect
    }

    /// Visible on screen right now.
    public var isVisible: Bool { !minimized && !hidden }

    public var json: JSON {
        [
            "id": JSON(id),
            "title": .string(title),
            "app": app.json,
            "bounds": bounds.json,
            "client": client.json,
            "minimized": .bool(minimized),
            "hidden": .bool(hidden),
            "focused": .bool(focused),
            "desktop": .optional(desktop) { JSON($0) },
            "override_redirect": .bool(overrideRedirect),
        ]
    }
}

/// The answer to `windows`: stacking order, top first.
public struct WindowList: Equatable, Sendable {
    public var windows: [Window]
    public var focused: WindowID?
    public var frontmost: App?

    public init(windows: [Window], focused: WindowID?, frontmost: App?) {
        self.windows = windows
        self.focused = focused
        self.frontmost = frontmost
    }

    public var json: JSON {
        [
            "windows": .array(windows.map(\.json)),
            "focused": .optional(focused) { JSON($0) },
            "frontmost": .optional(frontmost) { $0.json },
        ]
    }
}

public enum ImageFormat: String, Sendable {
    case jpeg
    case png
}

/// Pixels in memory: 4 bytes per pixel, R G B and an unused fourth byte,
/// rows top to bottom. Every capture is converted to this layout, whatever
/// the capture API delivered, so comparisons and encoders see one format.
public struct PixelBuffer: Equatable, Sendable {
    public let width: Int
    public let height: Int
    public let bytesPerRow: Int
    public var bytes: [UInt8]

    public init(width: Int, height: Int, bytesPerRow: Int, bytes: [UInt8]) {
        precondition(width >= 0 && height >= 0 && bytesPerRow >= width * 4, "bad pixel buffer geometry")
        precondition(bytes.count >= bytesPerRow * height, "pixel buffer smaller than its geometry")
        self.width = width
        self.height = height
        self.bytesPerRow = bytesPerRow
        self.bytes = bytes
    }

    /// A tightly packed buffer filled with one colour.
    public init(width: Int, height: Int, fill: (r: UInt8, g: UInt8, b: UInt8)) {
        var bytes = [UInt8](repeating: 255, count: width * height * 4)
        for index in stride(from: 0, to: bytes.count, by: 4) {
            bytes[index] = fill.r
            bytes[index + 1] = fill.g
            bytes[index + 2] = fill.b
        }
        self.init(width: width, height: height, bytesPerRow: width * 4, bytes: bytes)
    }

    /// The pixels of `x, y, width, height` (pixel coordinates), tightly
    /// packed; nil when that is not inside the buffer.
    public func crop(x: Int, y: Int, width: Int, height: Int) -> PixelBuffer? {
        guard x >= 0, y >= 0, width > 0, height > 0, x + width <= self.width, y + height <= self.height else {
            return nil
        }
        var out = [UInt8]()
        out.reserveCapacity(width * height * 4)
        for row in y..<(y + height) {
            let offset = row * bytesPerRow + x * 4
            out.append(contentsOf: bytes[offset..<(offset + width * 4)])
        }
        return PixelBuffer(width: width, height: height, bytesPerRow: width * 4, bytes: out)
    }
}
