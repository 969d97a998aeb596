/// The macOS helper's capabilities, in the order the handshake lists them.
/// `capture.include_apps` and `permissions` are macOS extensions of the
/// protocol (see helpers/macos/README.md). They live in the core so that the
/// fake desktop the transcripts run against on any platform claims exactly
/// what the real one does.
public enum MacCapabilities {
    public static let all = [
        "displays", "capture", "capture.mask", "capture.include_apps", "capture.png", "capture.jpeg", "windows",
        "window_at", "patch_check", "clipboard", "hide", "permissions", "key_layout", "a11y", "teach", "watch_escape",
        "indicator",
    ]
}
