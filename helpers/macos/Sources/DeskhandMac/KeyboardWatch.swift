import CoreGraphics
import DeskhandHelperCore
import Foundation

/// The keyboard watch behind `watch_escape`: a listen-only event tap on
/// key presses at the session level. Listen-only, so it can neither delay
/// nor change a key press; the handler decides which press is the user's
/// Escape (`EscapeWatch`) from the fields this tap reads off each event.
///
/// macOS creates the tap only for a process the user has allowed under
/// Privacy & Security > Input Monitoring (Accessibility also allows it);
/// otherwise `CGEvent.tapCreate` returns nil, reported as
/// `PermissionError.inputMonitoringNotGranted`.
@MainActor
final class KeyboardWatch {
    private var port: CFMachPort?
    private var source: CFRunLoopSource?
    private var onKeyDown: (@MainActor (KeyDown) -> Void)?
    private let log: Log

    init(log: Log) {
        self.log = log
    }

    func start(_ onKeyDown: @escaping @MainActor (KeyDown) -> Void) throws {
        self.onKeyDown = onKeyDown
        if port != nil {
            return
        }
        let mask = CGEventMask(1) << CGEventMask(CGEventType.keyDown.rawValue)
        guard
            let port = CGEvent.tapCreate(
                tap: .cgSessionEventTap, place: .headInsertEventTap, options: .listenOnly,
                eventsOfInterest: mask, callback: keyboardWatchCallback,
                userInfo: Unmanaged.passUnretained(self).toOpaque())
        else {
            throw PermissionError.inputMonitoringNotGranted
        }
        // The main run loop: the callback then runs on the main actor,
        // where the handler and its output live.
        let source = CFMachPortCreateRunLoopSource(kCFAllocatorDefault, port, 0)
        CFRunLoopAddSource(CFRunLoopGetMain(), source, .commonModes)
        CGEvent.tapEnable(tap: port, enable: true)
        self.port = port
        self.source = source
    }

    fileprivate func handle(type: CGEventType, key: KeyDown?) {
        switch type {
        case .tapDisabledByTimeout, .tapDisabledByUserInput:
            // The system switches a tap off when it stalls, or during
            // secure input; an Escape watch that stays off would be silent.
            if let port {
                CGEvent.tapEnable(tap: port, enable: true)
            }
            log.warn("the keyboard watch was switched off by the system (event type \(type.rawValue)); switched it on again")
        case .keyDown:
            if let key {
                onKeyDown?(key)
            }
        default:
            break
        }
    }
}

/// The tap's C callback. It reads the fields off the event here and hands
/// on only values, on the main actor (the run loop the source was added to).
/// A held key's autorepeat is not a new press.
private func keyboardWatchCallback(
    proxy: CGEventTapProxy, type: CGEventType, event: CGEvent, userInfo: UnsafeMutableRawPointer?
) -> Unmanaged<CGEvent>? {
    guard let userInfo else {
        return Unmanaged.passUnretained(event)
    }
    var key: KeyDown?
    if type == .keyDown && event.getIntegerValueField(.keyboardEventAutorepeat) == 0 {
        key = KeyDown(
            keyCode: event.getIntegerValueField(.keyboardEventKeycode),
            sourceUserData: event.getIntegerValueField(.eventSourceUserData),
            sourcePID: event.getIntegerValueField(.eventSourceUnixProcessID))
    }
    let watch = Unmanaged<KeyboardWatch>.fromOpaque(userInfo).takeUnretainedValue()
    let pressed = key
    MainActor.assumeIsolated {
        watch.handle(type: type, key: pressed)
    }
    return Unmanaged.passUnretained(event)
}
