import AppKit
import DeskhandHelperCore
import Foundation

/// `hide` and `restore` on macOS. There is no public way to minimize one
/// window of another app without Accessibility and a private call to map
/// CGWindowIDs to AX elements, so a window is hidden by hiding its app
/// (NSRunningApplication.hide, what Cmd-H does): every window of that app
/// goes, which is what the safety layer wants for an unapproved app anyway.
/// `restore` unhides the app again. Windows the user minimized stay
/// minimized.
@MainActor
final class AppVisibility {
    /// How long to wait for the window server to show the change.
    static let settleTimeout: TimeInterval = 1
    static let pollInterval: UInt64 = 20_000_000

    var catalog = WindowCatalog()

    /// Hides the apps of the visible windows among `ids`. Unknown ids fail
    /// the call before anything changes. Returns the ids whose window was on
    /// screen and is now hidden, in request order.
    func hide(_ ids: [WindowID]) async throws -> [WindowID] {
        let known = try windows(ids)
        var changed: [WindowID] = []
        var apps: [pid_t: NSRunningApplication] = [:]
        for id in ids {
            guard let info = known[id], info.isOnScreen, info.isTopLevel,
                let application = catalog.runningApplication(info.pid)
            else { continue }
            // hide() answers false for apps that cannot be hidden (the
            // frontmost app during some transitions, apps without a UI);
            // their windows are simply not reported as changed.
            if !application.isHidden && apps[info.pid] == nil && application.hide() {
                apps[info.pid] = application
            }
            if apps[info.pid] != nil && !changed.contains(id) {
                changed.append(id)
            }
        }
        await waitUntil(windows: changed, onScreen: false)
        return changed
    }

    /// Unhides the apps of the hidden windows among `ids`. Returns the ids
    /// that were hidden and are visible again.
    func restore(_ ids: [WindowID]) async throws -> [WindowID] {
        let known = try windows(ids)
        var changed: [WindowID] = []
        var apps: [pid_t: NSRunningApplication] = [:]
        for id in ids {
            guard let info = known[id], !info.isOnScreen, let application = catalog.runningApplication(info.pid)
            else { continue }
            if application.isHidden && apps[info.pid] == nil {
                apps[info.pid] = application
                _ = application.unhide()
            }
            if apps[info.pid] != nil && !changed.contains(id) {
                changed.append(id)
            }
        }
        await waitUntil(windows: changed, onScreen: true)
        return changed
    }

    /// The window-server entries of `ids`, or `no_such_window` naming every
    /// id that does not exist.
    private func windows(_ ids: [WindowID]) throws -> [WindowID: WindowInfo] {
        guard !ids.isEmpty else { return [:] }
        var byID: [WindowID: WindowInfo] = [:]
        for info in WindowServer.list(onScreenOnly: false) {
            byID[info.id] = info
        }
        let unknown = ids.filter { byID[$0] == nil }
        if !unknown.isEmpty {
            throw DesktopError.noSuchWindows(unknown)
        }
        return byID
    }

    /// Polls until every window is (or is not) on screen, for at most
    /// `settleTimeout`: hiding and unhiding are asynchronous, and a capture
    /// right after `hide` must not see the window.
    private func waitUntil(windows ids: [WindowID], onScreen: Bool) async {
        guard !ids.isEmpty else { return }
        let deadline = Date().addingTimeInterval(Self.settleTimeout)
        let wanted = Set(ids)
        while Date() < deadline {
            let visible = Set(WindowServer.list(onScreenOnly: true).map(\.id))
            let settled = onScreen ? wanted.isSubset(of: visible) : wanted.isDisjoint(with: visible)
            if settled { return }
            try? await Task.sleep(nanoseconds: Self.pollInterval)
        }
    }
}
