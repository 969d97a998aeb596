import AppKit
import CoreGraphics
import DeskhandHelperCore
import Foundation

/// The active displays, from Quartz Display Services, named by NSScreen.
/// Coordinates are CoreGraphics global display coordinates: points, origin
/// at the top-left of the main display, y down, which is the protocol's
/// logical space.
@MainActor
enum DisplayList {
    static func current() throws -> [Display] {
        var count: UInt32 = 0
        guard CGGetActiveDisplayList(0, nil, &count) == .success, count > 0 else {
            throw DesktopError.noDisplays
        }
        var ids = [CGDirectDisplayID](repeating: 0, count: Int(count))
        guard CGGetActiveDisplayList(count, &ids, &count) == .success else {
            throw DesktopError.noDisplays
        }
        let main = CGMainDisplayID()
        let names = screenNames()
        // The list starts with the main display; secondary members of a
        // mirror set show the same pixels as their master and are left out.
        let drawable = ids.prefix(Int(count)).filter { CGDisplayMirrorsDisplay($0) == kCGNullDirectDisplay }
        let displays = drawable.map { id in
            display(id: id, name: names[id], primary: id == main)
        }
        guard !displays.isEmpty else {
            throw DesktopError.noDisplays
        }
        if displays.contains(where: \.primary) {
            return displays
        }
        // Exactly one display is primary: the main one, else the first.
        var fallback = displays
        fallback[0].primary = true
        return fallback
    }

    private static func display(id: CGDirectDisplayID, name: String?, primary: Bool) -> Display {
        let bounds = CGDisplayBounds(id)
        let logical = Size(width: Int(bounds.width.rounded()), height: Int(bounds.height.rounded()))
        var physical = Size(width: CGDisplayPixelsWide(id), height: CGDisplayPixelsHigh(id))
        if let mode = CGDisplayCopyDisplayMode(id) {
            // The mode's pixel size is the backing store (2x on Retina);
            // CGDisplayPixelsWide reports points for scaled modes.
            physical = Size(width: mode.pixelWidth, height: mode.pixelHeight)
        }
        let scale = logical.width > 0 ? Double(physical.width) / Double(logical.width) : 1
        let millimetres = CGDisplayScreenSize(id)
        return Display(
            id: id,
            name: name ?? (CGDisplayIsBuiltin(id) != 0 ? "Built-in Display" : "Display \(id)"),
            origin: Point(x: Int(bounds.minX.rounded()), y: Int(bounds.minY.rounded())),
            logical: logical,
            physical: physical,
            scale: scale,
            primary: primary,
            mm: Size(width: Int(millimetres.width.rounded()), height: Int(millimetres.height.rounded())))
    }

    /// NSScreen's localized names by display id ("Built-in Retina Display",
    /// "DELL U2720Q").
    private static func screenNames() -> [CGDirectDisplayID: String] {
        var names: [CGDirectDisplayID: String] = [:]
        let key = NSDeviceDescriptionKey("NSScreenNumber")
        for screen in NSScreen.screens {
            if let number = screen.deviceDescription[key] as? NSNumber {
                names[number.uint32Value] = screen.localizedName
            }
        }
        return names
    }

    /// The display that holds all of `rect`, or the error that says why
    /// none does.
    static func display(containing rect: Rect, in displays: [Display]) throws -> Display {
        if let display = displays.first(where: { $0.bounds.contains(rect) }) {
            return display
        }
        let covered = displays.filter { $0.bounds.intersection(rect) != nil }
        let coveredArea = covered.compactMap { $0.bounds.intersection(rect) }.reduce(0) { $0 + $1.width * $1.height }
        if covered.count > 1 && coveredArea == rect.width * rect.height {
            throw DesktopError.rectSpansDisplays(rect, displays: displays)
        }
        throw DesktopError.rectOutsideScreen(rect, displays: displays)
    }
}
