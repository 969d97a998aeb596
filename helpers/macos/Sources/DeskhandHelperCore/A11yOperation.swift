/// What `a11y_act` does to an element, through the accessibility API only.
public enum A11yOperation: Equatable, Sendable {
    case action(String)
    case setText(String)
    case insertText(String)
    case setValue(Double)
    case focus
    case scrollTo
    case select

    /// The op's protocol name.
    public var name: String {
        switch self {
        case .action: return "action"
        case .setText: return "set_text"
        case .insertText: return "insert_text"
        case .setValue: return "set_value"
        case .focus: return "focus"
        case .scrollTo: return "scroll_to"
        case .select: return "select"
        }
    }

    static let operations = ["action", "set_text", "insert_text", "set_value", "focus", "scroll_to", "select"]

    /// Reads `op` and its own parameters; PROTOCOL.md lists them per op.
    init(_ p: Params) throws {
        let op = try p.requiredString("op")
        switch op {
        case "action":
            let action = try p.requiredString("action")
            if action.isEmpty {
                throw p.bad("\"action\" must name one of the element's actions (its \"actions\" in a11y_tree)")
            }
            self = .action(action)
        case "set_text":
            self = .setText(try p.requiredString("text"))
        case "insert_text":
            self = .insertText(try p.requiredString("text"))
        case "set_value":
            guard let value = p.value("value") else {
                throw p.bad("\"value\" is required (a number inside the element's range)")
            }
            let number: Double
            switch value {
            case .int(let int): number = Double(int)
            case .double(let double) where double.isFinite: number = double
            default: throw p.bad("\"value\" must be a number, got \(value.serializedString())")
            }
            self = .setValue(number)
        case "focus":
            self = .focus
        case "scroll_to":
            self = .scrollTo
        case "select":
            self = .select
        default:
            throw p.bad("\"op\" must be one of \(Self.operations.map { quoted($0) }.joined(separator: ", ")), got \(quoted(op))")
        }
    }
}
