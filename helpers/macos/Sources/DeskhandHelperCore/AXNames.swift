import Foundation

/// AX names mapped to the contract's AT-SPI names (helpers/PROTOCOL.md,
/// "Accessibility tree (macOS)"), so the supervisor reads one vocabulary.
public enum AXNames {
    public static let textRoles: Set<String> = ["AXTextField", "AXTextArea", "AXComboBox", "AXSearchField"]
    public static let toggleRoles: Set<String> = ["AXCheckBox", "AXRadioButton", "AXToggle", "AXSwitch", "AXMenuItem"]

    public static let roles: [String: String] = [
        "AXApplication": "application", "AXWindow": "frame", "AXSheet": "dialog", "AXDrawer": "panel",
        "AXButton": "push button", "AXCheckBox": "check box", "AXRadioButton": "radio button",
        "AXRadioGroup": "panel", "AXTextField": "text", "AXTextArea": "text", "AXSearchField": "text",
        "AXStaticText": "label", "AXSlider": "slider", "AXIncrementor": "spin button", "AXStepper": "spin button",
        "AXMenuBar": "menu bar", "AXMenuBarItem": "menu", "AXMenu": "menu", "AXMenuItem": "menu item",
        "AXMenuButton": "push button", "AXPopUpButton": "combo box", "AXComboBox": "combo box",
        "AXGroup": "panel", "AXScrollArea": "scroll pane", "AXScrollBar": "scroll bar", "AXTable": "table",
        "AXRow": "table row", "AXColumn": "table column header", "AXCell": "table cell", "AXOutline": "tree table",
        "AXBrowser": "tree", "AXList": "list", "AXImage": "image", "AXLink": "link", "AXTabGroup": "page tab list",
        "AXToolbar": "tool bar", "AXProgressIndicator": "progress bar", "AXBusyIndicator": "progress bar",
        "AXLevelIndicator": "level bar", "AXDisclosureTriangle": "toggle button", "AXSplitGroup": "split pane",
        "AXSplitter": "separator", "AXColorWell": "color chooser", "AXWebArea": "document web",
        "AXHeading": "heading", "AXDateField": "date editor", "AXTimeField": "date editor", "AXGrid": "table",
        "AXValueIndicator": "slider", "AXHelpTag": "tool tip", "AXRuler": "ruler", "AXLayoutArea": "panel",
        "AXMatte": "panel", "AXUnknown": "unknown", "AXPopover": "dialog",
    ]

    public static let subroles: [String: String] = [
        "AXDialog": "dialog", "AXSystemDialog": "alert", "AXFloatingWindow": "window",
        "AXSecureTextField": "password text", "AXTabButton": "page tab", "AXToggle": "toggle button",
        "AXSwitch": "toggle button", "AXSearchField": "text", "AXOutlineRow": "tree item",
        "AXSortButton": "push button", "AXTextAttachment": "image", "AXContentList": "list",
        "AXDefinitionList": "list", "AXApplicationDialog": "dialog", "AXApplicationAlert": "alert",
        "AXDocumentArticle": "article", "AXLandmarkNavigation": "landmark", "AXTimeline": "slider",
    ]

    public static let actions: [String: String] = [
        "AXPress": "press", "AXIncrement": "increment", "AXDecrement": "decrement", "AXConfirm": "activate",
        "AXCancel": "cancel", "AXShowMenu": "show menu", "AXRaise": "raise", "AXPick": "pick",
        "AXScrollToVisible": "scroll to visible", "AXShowAlternateUI": "show alternate ui",
        "AXShowDefaultUI": "show default ui", "AXOpen": "open", "AXZoomWindow": "zoom window",
    ]

    /// The contract role: the subrole's name where it says more (a secure
    /// text field, a tab), else the role's, else the AX role split into
    /// lower-case words ("AXRelevanceIndicator" is "relevance indicator").
    public static func role(_ role: String, subrole: String?) -> String {
        if let subrole, let name = subroles[subrole] {
            return name
        }
        return roles[role] ?? words(role)
    }

    public static func action(_ axName: String) -> String {
        actions[axName] ?? words(axName)
    }

    /// "AXShowAlternateUI" -> "show alternate ui"; names without the AX
    /// prefix (custom actions) are kept as they are.
    public static func words(_ name: String) -> String {
        guard name.hasPrefix("AX") else { return name }
        var out = ""
        var previousUpper = true
        for character in name.dropFirst(2) {
            if character.isUppercase && !previousUpper && !out.isEmpty {
                out.append(" ")
            }
            previousUpper = character.isUppercase
            out.append(contentsOf: character.lowercased())
        }
        return out
    }
}
