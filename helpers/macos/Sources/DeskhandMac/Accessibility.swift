import AppKit
import ApplicationServices
import DeskhandHelperCore
import Foundation

/// The accessibility tree over the macOS Accessibility API (AXUIElement),
/// behind the `a11y_*` methods (helpers/PROTOCOL.md, "Accessibility tree",
/// and its macOS notes).
///
/// Speed comes from reading every attribute a node needs in one
/// AXUIElementCopyMultipleAttributeValues call (one IPC round trip to the
/// app instead of one per attribute) and from a messaging timeout on each
/// app, so an app that hangs costs that timeout, not the helper. Electron
/// and Chromium apps build their tree only when asked, through
/// AXManualAccessibility, which is set once per app before its first read.
///
/// Refs are the AX element itself, registered under a counter: AX elements
/// are equal (CFEqual) when they stand for the same object, so a node gets
/// the same ref in every read while it lives, and a ref whose element is
/// gone answers kAXErrorInvalidUIElement, which is `stale_element`.
@MainActor
final class Accessibility {
    /// Longest wait for one AX message to an app.
    static let messagingTimeout: Float = 0.5
    /// Refs kept before the registry starts over (old refs then go stale).
    static let maxRefs = 200_000

    private var elements: [String: AXUIElement] = [:]
    private var refs: [ElementKey: String] = [:]
    private var nextRef: UInt64 = 1
    private var manualAccessibility: Set<pid_t> = []

    /// The attributes of one node, read in one batch, in this order.
    private static let nodeAttributes: [String] = [
        kAXRoleAttribute, kAXSubroleAttribute, kAXTitleAttribute, kAXDescriptionAttribute, kAXValueAttribute,
        kAXPositionAttribute, kAXSizeAttribute, kAXEnabledAttribute, kAXFocusedAttribute, kAXSelectedAttribute,
        kAXExpandedAttribute, kAXChildrenAttribute, kAXMinValueAttribute, kAXMaxValueAttribute, kAXHelpAttribute,
        kAXMinimizedAttribute, kAXModalAttribute, kAXSelectedChildrenAttribute, "AXValueIncrement",
        kAXPlaceholderValueAttribute,
    ]

    private enum Slot: Int {
        case role, subrole, title, description, value, position, size, enabled, focused, selected, expanded, children,
            minValue, maxValue, help, minimized, modal, selectedChildren, increment, placeholder
    }

    // MARK: - a11y_apps

    func apps() -> JSON {
        guard Permissions.accessibilityTrusted() else {
            return ["available": false, "reason": .string(AccessibilityError.notTrusted.message), "apps": []]
        }
        var apps: [JSON] = []
        for application in NSWorkspace.shared.runningApplications where application.activationPolicy == .regular {
            let pid = application.processIdentifier
            let element = appElement(pid)
            var windows: [JSON] = []
            for window in children(of: element, attribute: kAXWindowsAttribute) {
                let values = batch(window, [kAXTitleAttribute, kAXPositionAttribute, kAXSizeAttribute])
                windows.append([
                    "ref": .string(ref(for: window, pid: pid)),
                    "title": .string(values[0] as? String ?? ""),
                    "bounds": .optional(Self.bounds(position: values[1], size: values[2])) { $0 },
                ])
            }
            apps.append([
                "pid": JSON(Int(pid)),
                "name": .string(application.localizedName ?? application.bundleIdentifier ?? "pid \(pid)"),
                "toolkit": .optional(Self.toolkit(application)) { .string($0) },
                "bundle_id": .optional(application.bundleIdentifier) { .string($0) },
                "windows": .array(windows),
            ])
        }
        return ["available": true, "apps": .array(apps)]
    }

    // MARK: - a11y_tree

    func tree(_ request: A11yTreeRequest) throws -> JSON {
        try requireTrusted()
        let started = Date()
        let deadline = started.addingTimeInterval(Double(request.deadlineMilliseconds) / 1000)
        let app = try runningApp(request.pid)
        let window = try pickWindow(app: app, pid: request.pid, request: request)
        var nodes: [JSON] = []
        var truncated: String?
        // Depth-first pre-order with an explicit stack: (element, parent
        // index, depth), children pushed in reverse so they pop in order.
        var stack: [(AXUIElement, Int, Int)] = [(window, -1, 0)]
        var windowNode: JSON = .null
        while let item = stack.popLast() {
            let (element, parent, depth) = item
            if nodes.count >= request.maxNodes {
                truncated = "nodes"
                break
            }
            if Date() >= deadline {
                truncated = "time"
                break
            }
            let info = readNode(element, pid: request.pid)
            let index = nodes.count
            nodes.append(info.node(parent: parent, depth: depth))
            if index == 0 {
                windowNode = [
                    "ref": info.json["ref"] ?? .null, "title": info.json["name"] ?? .string(""),
                    "bounds": info.json["bounds"] ?? .null,
                ]
            }
            if depth + 1 > request.maxDepth {
                if !info.children.isEmpty { truncated = truncated ?? "depth" }
                continue
            }
            for child in info.children.reversed() {
                stack.append((child, index, depth + 1))
            }
        }
        var result: JSONObject = [
            "window": windowNode,
            "nodes": .array(nodes),
            "elapsed_ms": JSON(Int(Date().timeIntervalSince(started) * 1000)),
        ]
        if let truncated {
            result["truncated"] = .string(truncated)
        }
        return .object(result)
    }

    // MARK: - a11y_element

    func element(pid: Int32, ref: String) throws -> JSON {
        try requireTrusted()
        let element = try resolve(pid: pid, ref: ref)
        let info = readNode(element, pid: pid)
        if info.invalid {
            throw AccessibilityError.stale(ref)
        }
        return ["node": info.node(parent: -1, depth: 0)]
    }

    // MARK: - a11y_act

    /// Acts through the API alone: no synthetic input, no pointer motion,
    /// no raise or activation (focus moves keyboard focus inside the app,
    /// which is what it is for).
    func act(pid: Int32, ref: String, _ operation: A11yOperation) throws {
        try requireTrusted()
        let element = try resolve(pid: pid, ref: ref)
        switch operation {
        case .action(let name):
            let exposed = actionNames(element)
            guard let axName = exposed.first(where: { Self.actionName($0) == name || $0 == name }) else {
                throw AccessibilityError.actionNotExposed(name, exposed: exposed.map(Self.actionName))
            }
            try check(AXUIElementPerformAction(element, axName as CFString), ref: ref, doing: "performing \(name)")
        case .setText(let text):
            try requireSettable(element, kAXValueAttribute, ref: ref, what: "set_text (its text is not editable)")
            try check(AXUIElementSetAttributeValue(element, kAXValueAttribute as CFString, text as CFString), ref: ref, doing: "setting the text")
        case .insertText(let text):
            // Setting the selected text replaces the selection, and with an
            // empty selection inserts at the caret, as typing would.
            try requireSettable(element, kAXSelectedTextAttribute, ref: ref, what: "insert_text (it has no editable selection)")
            try check(
                AXUIElementSetAttributeValue(element, kAXSelectedTextAttribute as CFString, text as CFString), ref: ref,
                doing: "inserting the text")
        case .setValue(let value):
            let values = batch(element, [kAXMinValueAttribute, kAXMaxValueAttribute, kAXValueAttribute])
            guard values[2] is NSNumber else {
                throw AccessibilityError.unsupported(ref, "set_value (it has no numeric value)")
            }
            if let min = (values[0] as? NSNumber)?.doubleValue, let max = (values[1] as? NSNumber)?.doubleValue,
                value < min || value > max
            {
                throw AccessibilityError.outOfRange(value, min: min, max: max)
            }
            try requireSettable(element, kAXValueAttribute, ref: ref, what: "set_value (its value is read-only)")
            try check(
                AXUIElementSetAttributeValue(element, kAXValueAttribute as CFString, NSNumber(value: value)), ref: ref,
                doing: "setting the value")
        case .focus:
            try requireSettable(element, kAXFocusedAttribute, ref: ref, what: "focus (it cannot take keyboard focus)")
            try check(AXUIElementSetAttributeValue(element, kAXFocusedAttribute as CFString, kCFBooleanTrue), ref: ref, doing: "focusing")
        case .scrollTo:
            guard actionNames(element).contains("AXScrollToVisible") else {
                throw AccessibilityError.unsupported(ref, "scroll_to (it has no AXScrollToVisible action)")
            }
            try check(AXUIElementPerformAction(element, "AXScrollToVisible" as CFString), ref: ref, doing: "scrolling to it")
        case .select:
            if settable(element, kAXSelectedAttribute) {
                try check(AXUIElementSetAttributeValue(element, kAXSelectedAttribute as CFString, kCFBooleanTrue), ref: ref, doing: "selecting")
                return
            }
            guard let parent = batch(element, [kAXParentAttribute])[0], CFGetTypeID(parent as CFTypeRef) == AXUIElementGetTypeID() else {
                throw AccessibilityError.unsupported(ref, "select (neither it nor its parent has a selection)")
            }
            let container = parent as! AXUIElement
            try requireSettable(container, kAXSelectedChildrenAttribute, ref: ref, what: "select (its parent's selection is read-only)")
            try check(
                AXUIElementSetAttributeValue(container, kAXSelectedChildrenAttribute as CFString, [element] as CFArray), ref: ref,
                doing: "selecting")
        }
    }

    // MARK: - reading

    private struct Read {
        var json: JSONObject
        var children: [AXUIElement]
        /// The element no longer exists.
        var invalid: Bool

        func node(parent: Int, depth: Int) -> JSON {
            var node = json
            node["parent"] = JSON(parent)
            node["depth"] = JSON(depth)
            return .object(node)
        }
    }

    private func readNode(_ element: AXUIElement, pid: pid_t) -> Read {
        let raw = batchRaw(element, Self.nodeAttributes)
        let values = raw.values
        func value(_ slot: Slot) -> Any? { values[slot.rawValue] }
        let role = value(.role) as? String ?? "AXUnknown"
        let subrole = value(.subrole) as? String
        let actions = actionNames(element)
        let contractRole = AXNames.role(role, subrole: subrole)
        let bounds = Self.bounds(position: value(.position), size: value(.size))
        let isText = AXNames.textRoles.contains(role)

        var states: [String] = []
        if (value(.enabled) as? Bool) ?? true {
            states += ["enabled", "sensitive"]
        }
        if value(.focused) as? Bool == true { states.append("focused") }
        if value(.selected) as? Bool == true { states.append("selected") }
        if let expanded = value(.expanded) as? Bool {
            states.append("expandable")
            if expanded { states.append("expanded") }
        }
        if value(.minimized) as? Bool == true { states.append("iconified") }
        if value(.modal) as? Bool == true { states.append("modal") }
        if role == "AXBusyIndicator" || (role == "AXProgressIndicator" && value(.maxValue) == nil) {
            states.append("busy")
        }
        if let size = bounds?["w"]?.intValue, size > 0 {
            states += ["showing", "visible"]
        }
        if AXNames.toggleRoles.contains(role), let number = value(.value) as? NSNumber {
            states.append("checkable")
            if number.intValue == 1 { states.append("checked") }
            if number.intValue == 2 { states.append("indeterminate") }
        }
        let editable = isText && settable(element, kAXValueAttribute)
        if editable { states.append("editable") }
        if role == "AXTextField" || role == "AXComboBox" { states.append("single line") }
        if role == "AXTextArea" { states.append("multi line") }

        var interfaces: [String] = []
        if !actions.isEmpty { interfaces.append("action") }
        if bounds != nil { interfaces.append("component") }
        if isText && value(.value) is String { interfaces.append("text") }
        if editable { interfaces.append("editable_text") }
        let number = value(.value) as? NSNumber
        let ranged = number != nil && value(.minValue) is NSNumber && value(.maxValue) is NSNumber
        if ranged { interfaces.append("value") }
        if value(.selectedChildren) != nil { interfaces.append("selection") }

        let title = value(.title) as? String
        let description = value(.description) as? String
        var json: JSONObject = [
            "ref": .string(ref(for: element, pid: pid)),
            "role": .string(contractRole),
            "name": .string(Self.nonEmpty(title) ?? Self.nonEmpty(description) ?? (isText ? "" : Self.nonEmpty(value(.placeholder) as? String) ?? "")),
            "states": .array(states.map { .string($0) }),
            "actions": .array(actions.map { .string(AXNames.action($0)) }),
            "interfaces": .array(interfaces.map { .string($0) }),
        ]
        if let help = Self.nonEmpty(value(.help) as? String) ?? (Self.nonEmpty(title) != nil ? Self.nonEmpty(description) : nil) {
            json["description"] = .string(help)
        }
        if let text = value(.value) as? String {
            json["value"] = .string(text)
        }
        if ranged, let number, let min = value(.minValue) as? NSNumber, let max = value(.maxValue) as? NSNumber {
            var range: JSONObject = ["min": .double(min.doubleValue), "max": .double(max.doubleValue), "current": .double(number.doubleValue)]
            if let step = value(.increment) as? NSNumber { range["step"] = .double(step.doubleValue) }
            json["range"] = .object(range)
        }
        if let bounds {
            json["bounds"] = bounds
        }
        let children = (value(.children) as? [AXUIElement]) ?? []
        return Read(json: json, children: children, invalid: raw.invalid)
    }

    /// One batched read; absent or failed attributes are nil.
    private func batch(_ element: AXUIElement, _ attributes: [String]) -> [Any?] {
        batchRaw(element, attributes).values
    }

    private func batchRaw(_ element: AXUIElement, _ attributes: [String]) -> (values: [Any?], invalid: Bool) {
        var raw: CFArray?
        let status = AXUIElementCopyMultipleAttributeValues(
            element, attributes as CFArray, AXCopyMultipleAttributeOptions(rawValue: 0), &raw)
        guard status == .success, let array = (raw as NSArray?) as? [Any], array.count == attributes.count else {
            return (Array(repeating: nil, count: attributes.count), status == .invalidUIElement)
        }
        // A failed attribute comes back as an AXValue of type axError.
        let values: [Any?] = array.map { item in
            let ref = item as CFTypeRef
            if CFGetTypeID(ref) == AXValueGetTypeID(), AXValueGetType(ref as! AXValue) == .axError {
                return nil
            }
            return item
        }
        return (values, false)
    }

    private func children(of element: AXUIElement, attribute: String) -> [AXUIElement] {
        (batch(element, [attribute])[0] as? [AXUIElement]) ?? []
    }

    private func actionNames(_ element: AXUIElement) -> [String] {
        var names: CFArray?
        guard AXUIElementCopyActionNames(element, &names) == .success else { return [] }
        return (names as? [String]) ?? []
    }

    private func settable(_ element: AXUIElement, _ attribute: String) -> Bool {
        var settable: DarwinBoolean = false
        return AXUIElementIsAttributeSettable(element, attribute as CFString, &settable) == .success && settable.boolValue
    }

    private func requireSettable(_ element: AXUIElement, _ attribute: String, ref: String, what: String) throws {
        var settable: DarwinBoolean = false
        let status = AXUIElementIsAttributeSettable(element, attribute as CFString, &settable)
        if status == .invalidUIElement { throw AccessibilityError.stale(ref) }
        guard status == .success, settable.boolValue else {
            throw AccessibilityError.unsupported(ref, what)
        }
    }

    private func check(_ status: AXError, ref: String, doing what: String) throws {
        switch status {
        case .success: return
        case .invalidUIElement: throw AccessibilityError.stale(ref)
        case .actionUnsupported, .attributeUnsupported: throw AccessibilityError.unsupported(ref, what)
        case .cannotComplete: throw AccessibilityError.notResponding(what)
        default: throw AccessibilityError.failed(what, status.rawValue)
        }
    }

    // MARK: - apps, windows, refs

    private func requireTrusted() throws {
        guard Permissions.accessibilityTrusted() else { throw AccessibilityError.notTrusted }
    }

    private func runningApp(_ pid: Int32) throws -> AXUIElement {
        guard NSRunningApplication(processIdentifier: pid) != nil else {
            throw AccessibilityError.noSuchApp(pid)
        }
        return appElement(pid)
    }

    /// The app's element, with the messaging timeout set and, the first
    /// time, AXManualAccessibility, which makes Electron and Chromium apps
    /// build their tree (other apps ignore the unknown attribute).
    private func appElement(_ pid: pid_t) -> AXUIElement {
        let element = AXUIElementCreateApplication(pid)
        AXUIElementSetMessagingTimeout(element, Self.messagingTimeout)
        if !manualAccessibility.contains(pid) {
            manualAccessibility.insert(pid)
            _ = AXUIElementSetAttributeValue(element, "AXManualAccessibility" as CFString, kCFBooleanTrue)
        }
        return element
    }

    /// The window a tree is read from: the one whose geometry matches the
    /// window server's window `window` (AX has no public window id), else
    /// the one titled `title`, else the focused or main window, else the
    /// first.
    private func pickWindow(app: AXUIElement, pid: pid_t, request: A11yTreeRequest) throws -> AXUIElement {
        let windows = children(of: app, attribute: kAXWindowsAttribute)
        let described = windows.map { window -> (AXUIElement, String, JSON?) in
            let values = batch(window, [kAXTitleAttribute, kAXPositionAttribute, kAXSizeAttribute])
            return (window, values[0] as? String ?? "", Self.bounds(position: values[1], size: values[2]))
        }
        if let id = request.window {
            guard let info = WindowServer.list(onScreenOnly: false).first(where: { $0.id == id }), info.pid == pid else {
                throw AccessibilityError.noSuchWindow(id, pid: pid)
            }
            let want: JSON = ["x": JSON(info.bounds.x), "y": JSON(info.bounds.y), "w": JSON(info.bounds.width), "h": JSON(info.bounds.height)]
            if let match = described.first(where: { $0.2 == want }) ?? described.first(where: { !info.title.isEmpty && $0.1 == info.title }) {
                return match.0
            }
            throw AccessibilityError.noSuchWindow(id, pid: pid)
        }
        if let title = request.title {
            guard let match = described.first(where: { $0.1 == title }) ?? described.first(where: { $0.1.localizedCaseInsensitiveContains(title) }) else {
                throw AccessibilityError.noWindowTitled(title, pid: pid, titles: described.map(\.1))
            }
            return match.0
        }
        for attribute in [kAXFocusedWindowAttribute, kAXMainWindowAttribute] {
            if let value = batch(app, [attribute])[0], CFGetTypeID(value as CFTypeRef) == AXUIElementGetTypeID() {
                return value as! AXUIElement
            }
        }
        guard let first = windows.first else {
            throw AccessibilityError.noWindows(pid)
        }
        return first
    }

    private func ref(for element: AXUIElement, pid: pid_t) -> String {
        let key = ElementKey(element)
        if let known = refs[key] {
            return known
        }
        if elements.count >= Self.maxRefs {
            elements.removeAll()
            refs.removeAll()
        }
        let ref = "ax:\(pid):\(nextRef)"
        nextRef += 1
        refs[key] = ref
        elements[ref] = element
        return ref
    }

    private func resolve(pid: Int32, ref: String) throws -> AXUIElement {
        guard ref.hasPrefix("ax:\(pid):") else {
            throw AccessibilityError.foreignRef(ref, pid: pid)
        }
        guard let element = elements[ref] else {
            throw AccessibilityError.stale(ref)
        }
        var role: CFTypeRef?
        if AXUIElementCopyAttributeValue(element, kAXRoleAttribute as CFString, &role) == .invalidUIElement {
            throw AccessibilityError.stale(ref)
        }
        return element
    }

    // MARK: - helpers

    /// `{x, y, w, h}` in global logical coordinates from AXPosition (top-left
    /// of the element, points from the top-left of the main display, the
    /// protocol's space) and AXSize; nil when either is missing.
    static func bounds(position: Any?, size: Any?) -> JSON? {
        guard let position, let size,
            CFGetTypeID(position as CFTypeRef) == AXValueGetTypeID(), CFGetTypeID(size as CFTypeRef) == AXValueGetTypeID()
        else { return nil }
        var point = CGPoint.zero
        var extent = CGSize.zero
        guard AXValueGetValue(position as! AXValue, .cgPoint, &point), AXValueGetValue(size as! AXValue, .cgSize, &extent) else {
            return nil
        }
        return [
            "x": JSON(Int(point.x.rounded())), "y": JSON(Int(point.y.rounded())),
            "w": JSON(Int(extent.width.rounded())), "h": JSON(Int(extent.height.rounded())),
        ]
    }

    private static func nonEmpty(_ string: String?) -> String? {
        guard let string, !string.isEmpty else { return nil }
        return string
    }

    /// The app's toolkit where its bundle shows it: Electron and Chromium
    /// ship their framework; everything else is reported as Cocoa only when
    /// it links AppKit the usual way, which every regular app does.
    static func toolkit(_ application: NSRunningApplication) -> String? {
        guard let bundle = application.bundleURL else { return nil }
        let frameworks = bundle.appendingPathComponent("Contents/Frameworks")
        let manager = FileManager.default
        if manager.fileExists(atPath: frameworks.appendingPathComponent("Electron Framework.framework").path) {
            return "electron"
        }
        if let items = try? manager.contentsOfDirectory(atPath: frameworks.path),
            items.contains(where: { $0.hasSuffix("Framework.framework") && $0.contains("Chrom") })
        {
            return "chromium"
        }
        return "cocoa"
    }

    static func actionName(_ axName: String) -> String { AXNames.action(axName) }
}

/// An AXUIElement as a dictionary key: equal when CFEqual, hashed by CFHash.
private struct ElementKey: Hashable {
    let element: AXUIElement

    init(_ element: AXUIElement) {
        self.element = element
    }

    static func == (lhs: ElementKey, rhs: ElementKey) -> Bool {
        CFEqual(lhs.element, rhs.element)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(CFHash(element))
    }
}
