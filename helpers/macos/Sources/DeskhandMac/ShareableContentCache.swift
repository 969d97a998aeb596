import CoreGraphics
import DeskhandHelperCore
import Foundation
import ScreenCaptureKit

/// ScreenCaptureKit's shareable content (displays, apps, windows), fetched
/// once and reused while the window server's picture is unchanged.
///
/// Fetching it takes tens of milliseconds; the window list takes about one.
/// So each use compares a fingerprint of the on-screen window ids and the
/// display layout, and fetches again only when it differs: a window that
/// opened, closed, or came back from being hidden, an app that launched or
/// quit, a display that moved. The fetch is also the real call that
/// confirms the Screen Recording preflight: it fails when the grant is
/// missing, and it is only made after the preflight passed, so it never
/// makes macOS prompt.
@MainActor
final class ShareableContentCache {
    private var content: SCShareableContent?
    private var fingerprint: [UInt32] = []
    private let log: Log

    init(log: Log) {
        self.log = log
    }

    /// Current content, fetched again when the window server changed.
    func current() async throws -> SCShareableContent {
        guard Permissions.screenRecordingPreflight() else {
            content = nil
            throw PermissionError.screenRecordingNotGranted
        }
        let now = WindowServer.fingerprint()
        if let content, now == fingerprint {
            return content
        }
        return try await refresh(fingerprint: now)
    }

    /// Drops the cache, so the next use fetches.
    func invalidate() {
        content = nil
        fingerprint = []
    }

    /// Whether a real ScreenCaptureKit call succeeds now (the preflight
    /// alone can be stale). It always fetches: the cached content was
    /// fetched while the grant held, so answering from it would report a
    /// grant revoked since then as granted. The fresh content replaces the
    /// cache, so the capture that usually follows does not fetch again.
    func confirmScreenRecording() async -> Bool {
        guard Permissions.screenRecordingPreflight() else {
            invalidate()
            return false
        }
        do {
            _ = try await refresh(fingerprint: WindowServer.fingerprint())
            return true
        } catch {
            return false
        }
    }

    private func refresh(fingerprint now: [UInt32]) async throws -> SCShareableContent {
        let started = Date()
        let fresh: SCShareableContent
        do {
            fresh = try await SCShareableContent.excludingDesktopWindows(false, onScreenWindowsOnly: true)
        } catch {
            content = nil
            throw Self.classify(error)
        }
        content = fresh
        fingerprint = now
        log.debug(
            "shareable content: \(fresh.displays.count) displays, \(fresh.applications.count) apps, \(fresh.windows.count) windows in \(String(format: "%.1f", Date().timeIntervalSince(started) * 1000)) ms"
        )
        return fresh
    }

    /// A ScreenCaptureKit error as the protocol reports it: a refusal means
    /// the permission, anything else a failed capture.
    static func classify(_ error: Error) -> Error {
        let nsError = error as NSError
        if nsError.domain == SCStreamErrorDomain && nsError.code == SCStreamError.Code.userDeclined.rawValue {
            return PermissionError.screenRecordingRefused(nsError.localizedDescription)
        }
        return DesktopError.captureFailed("\(nsError.localizedDescription) (\(nsError.domain) \(nsError.code))")
    }
}
