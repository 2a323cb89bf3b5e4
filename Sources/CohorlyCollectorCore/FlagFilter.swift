/// `flag=KEY[=VALUE]` of `GET /api/crashes` (`cohorly crashes list --flag`): crashes whose launch was served flag
/// KEY on (`$feature/KEY` true or a non-empty variant), or with exactly VALUE (a variant's name, `true`, `false`).
struct FlagFilter: Sendable {
    let key: String
    let value: String?

    init(_ text: String) {
        if let equals = text.firstIndex(of: "=") {
            key = String(text[..<equals])
            value = String(text[text.index(after: equals)...])
        } else {
            key = text
            value = nil
        }
    }

    func matches(_ properties: JSONValue) -> Bool {
        switch properties["$feature/" + key] {
        case .bool(let on)?: return value.map { $0 == String(on) } ?? on
        case .string(let variant)?: return value.map { $0 == variant } ?? !variant.isEmpty
        default: return false
        }
    }
}
