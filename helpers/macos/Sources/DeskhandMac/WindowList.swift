import AppKit
import CoreGraphics
import DeskhandHelperCore
import Foundation

/// One entry of CGWindowListCopyWindowInfo.
struct WindowInfo: Equatable {
    var id: CGWindowID
    var pid: pid_t
    var ownerName: String?
    /// Empty without Screen Recording: macOS hides other apps' titles then.
    var title: String
    var bounds: Rect
    var layer: Int
    var isOnScreen: Bool
    var alpha: Double

    init?(_ entry: [String: Any]) {
        guard let number = entry[kCGWindowNumber as String] as? NSNumber,
            let owner = entry[kCGWindowOwnerPID as String] as? NSNumber,
            let boundsEntry = entry[kCGWindowBounds as String] as? NSDictionary,
            let frame = CGRect(dictionaryRepresentation: boundsEntry as CFDictionary)
        else {
            return nil
        }
        id = number.uint32Value
        pid = owner.int32Value
        ownerName = entry[kCGWindowOwnerName as String] as? String
        title = entry[kCGWindowName as String] as? String ?? ""
        bounds = Rect(
            x: Int(frame.minX.rounded()), y: Int(frame.minY.rounded()),
            width: Int(frame.width.rounded()), height: Int(frame.height.rounded()))
        layer = (entry[kCGWindowLayer as String] as? NSNumber)?.intValue ?? 0
        isOnScreen = (entry[kCGWindowIsOnscreen as String] as? NSNumber)?.boolValue ?? false
        alpha = (entry[kCGWindowAlpha as String] as? NSNumber)?.doubleValue ?? 1
    }

    /// A window a user would call a window: an app's normal, floating or
    /// panel window, not the menu bar, the Dock, status items, the desktop
    /// picture or an invisible helper surface.
    var isTopLevel: Bool {
        layer >= 0 && layer < Self.dockLayer && alpha > 0 && bounds.width > 1 && bounds.height > 1
    }

    /// Windows at or above the Dock's level are system chrome.
    static let dockLayer = Int(CGWindowLevelForKey(.dockWindow))
}

/// Reads the window server's window list.
@MainActor
enum WindowServer {
    /// The window list, front to back. With `onScreenOnly` false, windows
    /// that are off screen (minimized, hidden, on another Space) follow the
    /// on-screen ones.
    static func list(onScreenOnly: Bool) -> [WindowInfo] {
        let onScreen = copy([.optionOnScreenOnly, .excludeDesktopElements])
        if onScreenOnly {
            return onScreen
        }
        let seen = Set(onScreen.map(\.id))
        let offScreen = copy([.optionAll, .excludeDesktopElements]).filter { !seen.contains($0.id) }
        return onScreen + offScreen
    }

    private static func copy(_ options: CGWindowListOption) -> [WindowInfo] {
        guard let entries = CGWindowListCopyWindowInfo(options, kCGNullWindowID) as? [[String: Any]] else {
            return []
        }
        let ownPID = ProcessInfo.processInfo.processIdentifier
        return entries.compactMap(WindowInfo.init).filter { $0.pid != ownPID }
    }

    /// The ids of the on-screen windows and the display layout: when this
    /// changes, cached ScreenCaptureKit content is stale.
    static func fingerprint() -> [UInt32] {
        var ids = copy([.optionOnScreenOnly]).map(\.id).sorted()
        var count: UInt32 = 0
        if CGGetActiveDisplayList(0, nil, &count) == .success, count > 0 {
            var displays = [CGDirectDisplayID](repeating: 0, count: Int(count))
            if CGGetActiveDisplayList(count, &displays, &count) == .success {
                for display in displays.prefix(Int(count)) {
                    let bounds = CGDisplayBounds(display)
                    ids.append(contentsOf: [
                        display, UInt32(bitPattern: Int32(bounds.minX)), UInt32(bitPattern: Int32(bounds.minY)),
                        UInt32(bounds.width), UInt32(bounds.height),
                    ])
                }
            }
        }
        return ids
    }
}

/// Turns window-server entries into protocol windows and apps.
@MainActor
struct WindowCatalog {
    private var apps: [pid_t: App] = [:]
    private var running: [pid_t: NSRunningApplication] = [:]

    mutating func runningApplication(_ pid: pid_t) -> NSRunningApplication? {
        if let cached = running[pid] {
            return cached
        }
        let application = NSRunningApplication(processIdentifier: pid)
        running[pid] = application
        return application
    }

    /// The app identity for a process: bundle id, name and executable from
    /// NSRunningApplication, the window server's owner name as a fallback.
    mutating func app(pid: pid_t, ownerName: String?) -> App {
        if let cached = apps[pid] {
            return cached
        }
        let application = runningApplication(pid)
        let exe = application?.executableURL?.path
        let name =
            application?.localizedName ?? ownerName ?? exe.map { URL(fileURLWithPath: $0).lastPathComponent }
            ?? "pid \(pid)"
        let app = App(pid: pid, name: name, exe: exe, bundleID: application?.bundleIdentifier)
        apps[pid] = app
        return app
    }

    static func app(for application: NSRunningApplication) -> App {
        let exe = application.executableURL?.path
        return App(
            pid: application.processIdentifier,
            name: application.localizedName ?? exe.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "pid \(application.processIdentifier)",
            exe: exe,
            bundleID: application.bundleIdentifier)
    }

    /// The protocol window list. macOS has no public way to map the
    /// Accessibility focus to a CGWindowID, so the focused window is the
    /// frontmost app's topmost normal-layer window, which is the key window
    /// in all but unusual cases (a floating panel in front).
    mutating func windowList(includeHidden: Bool) -> WindowList {
        let frontmost = NSWorkspace.shared.frontmostApplication
        let infos = WindowServer.list(onScreenOnly: !includeHidden).filter(\.isTopLevel)
        let focusedID = infos.first { $0.isOnScreen && $0.layer == 0 && $0.pid == frontmost?.processIdentifier }?.id
        var windows: [Window] = []
        for info in infos {
            let application = runningApplication(info.pid)
            if !info.isOnScreen {
                // Off-screen windows of background-only processes are
                // never shown to anyone; leave them out even when hidden
                // windows are asked for.
                guard let application, application.activationPolicy == .regular else { continue }
            }
            windows.append(window(info, focused: info.id == focusedID))
        }
        return WindowList(
            windows: windows,
            focused: focusedID,
            frontmost: frontmost.map { app(pid: $0.processIdentifier, ownerName: $0.localizedName) })
    }

    /// The topmost visible window whose frame contains the point.
    mutating func window(at point: Point) -> Window? {
        let frontmost = NSWorkspace.shared.frontmostApplication
        let infos = WindowServer.list(onScreenOnly: true).filter(\.isTopLevel)
        guard let hit = infos.first(where: { $0.bounds.contains(point) }) else {
            return nil
        }
        let focusedID = infos.first { $0.layer == 0 && $0.pid == frontmost?.processIdentifier }?.id
        return window(hit, focused: hit.id == focusedID)
    }

    mutating func window(_ info: WindowInfo, focused: Bool) -> Window {
        let hidden = runningApplication(info.pid)?.isHidden ?? false
        return Window(
            id: info.id,
            title: info.title,
            app: app(pid: info.pid, ownerName: info.ownerName),
            bounds: info.bounds,
            // macOS draws the title bar inside the window, so the whole
            // frame is the client area.
            client: info.bounds,
            minimized: !info.isOnScreen && !hidden,
            hidden: hidden,
            focused: focused,
            desktop: nil,
            overrideRedirect: info.layer != 0)
    }
}
