import AppKit
import ApplicationServices
import CoreGraphics
import DeskhandHelperCore
import Foundation
import IOKit.hid

/// macOS privacy permissions (TCC). The checks here never show a system
/// prompt: a helper that pops up dialogs whenever the supervisor calls it
/// would train users to click "Allow" on anything. Prompts happen only in
/// `requestInteractively`, which the user starts with
/// `deskhand-helper --request-permissions`.
public enum Permissions {
    /// The Screen Recording preflight. It can be stale (a grant made while
    /// the process runs shows only after a restart, and a revoked one may
    /// still read true), so capture paths confirm it with a real
    /// ScreenCaptureKit call; see `ShareableContentCache`.
    public static func screenRecordingPreflight() -> Bool {
        CGPreflightScreenCaptureAccess()
    }

    /// Whether Accessibility is granted. AXIsProcessTrusted never prompts
    /// (AXIsProcessTrustedWithOptions with the prompt option would).
    public static func accessibilityTrusted() -> Bool {
        AXIsProcessTrusted()
    }

    /// Whether Input Monitoring is granted, which the Escape watch's
    /// keyboard event tap needs (an Accessibility grant also allows it).
    /// IOHIDCheckAccess reads the Input Monitoring grant itself and never
    /// prompts (IOHIDRequestAccess would); CGPreflightListenEventAccess is
    /// the Quartz spelling of the same check, asked too so that either
    /// one's answer of "granted" counts.
    public static func inputMonitoringGranted() -> Bool {
        IOHIDCheckAccess(kIOHIDRequestTypeListenEvent) == kIOHIDAccessTypeGranted || CGPreflightListenEventAccess()
    }

    /// Asks for both permissions the way the user expects from an app: the
    /// system prompt where macOS still offers one, and the settings pane for
    /// anything not granted. Returns the exit status for
    /// `--request-permissions`: 0 when both are granted.
    @MainActor
    public static func requestInteractively(output: (String) -> Void) -> Int32 {
        var screenRecording = screenRecordingPreflight()
        if !screenRecording {
            // Shows the system prompt once per identity; afterwards macOS
            // only answers, so the pane is opened below as well.
            screenRecording = CGRequestScreenCaptureAccess()
        }
        let promptKey = kAXTrustedCheckOptionPrompt.takeUnretainedValue() as String
        let accessibility = AXIsProcessTrustedWithOptions([promptKey: true] as CFDictionary)
        // Optional: without it deskhand works, but the user's Escape does
        // not stop it; so it does not count in the exit status.
        let inputMonitoring = inputMonitoringGranted() || CGRequestListenEventAccess()
        output("Screen Recording: \(screenRecording ? "granted" : "not granted")")
        output("Accessibility: \(accessibility ? "granted" : "not granted")")
        output("Input Monitoring (for Escape to stop deskhand): \(inputMonitoring || accessibility ? "granted" : "not granted")")
        if !screenRecording, let url = URL(string: SettingsPane.screenRecording) {
            output("Opening System Settings > Privacy & Security > Screen Recording; switch deskhand-helper on, then restart deskhand.")
            NSWorkspace.shared.open(url)
        }
        if !accessibility, let url = URL(string: SettingsPane.accessibility) {
            output("Opening System Settings > Privacy & Security > Accessibility; switch deskhand-helper on, then restart deskhand.")
            NSWorkspace.shared.open(url)
        }
        if !inputMonitoring && !accessibility, let url = URL(string: SettingsPane.inputMonitoring) {
            output("Opening System Settings > Privacy & Security > Input Monitoring; switch deskhand-helper on, then restart deskhand.")
            NSWorkspace.shared.open(url)
        }
        return screenRecording && accessibility ? 0 : 1
    }
}
