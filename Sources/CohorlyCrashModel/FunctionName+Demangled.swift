extension FunctionName {
    /// The stack text's short form of a name that may be Swift's full demangled signature, made from the text alone
    /// (for names that arrived without their linkage name: another SDK's frames, issues keyed before the short
    /// form): `App.startService(Swift.String) async -> Swift.String` reads `startService(_:)`,
    /// `Shop.OrdersController.lineItem<A where A: Shop.Context>(id: Swift.String, context: A) -> Swift.Int` reads
    /// `OrdersController.lineItem<A>(id:context:)`, `Shop.Cart.total.getter : Swift.Int` reads `Cart.total.getter`,
    /// and a closure keeps its number and names what it is in (`closure #1 in startService(_:)`). Only a full
    /// signature of a function, an accessor or a closure in one changes (one with its result type, `-> …` or
    /// ` : …`); the short form itself, a C or C++ name, `module +0x…` and other Swift entities (descriptors,
    /// thunks) are returned as they are.
    public static func short(demangled name: String) -> String {
        let text = normalized(name)
        // `closure #1 () async -> () in App.f() -> ()`: the closure's number, then what it is in.
        for closure in ["closure #", "implicit closure #"] where text.hasPrefix(closure) {
            guard let split = topLevel(text, " in ") else { return text }
            let head = text[..<split]
            let number = head.dropFirst(closure.count).prefix { $0.isNumber }
            let rest = String(text[text.index(split, offsetBy: 4)...])
            let shortRest = short(demangled: rest)
            // What it is in did not shorten (a `job #1 …`): all of it as it is, not half of it.
            if shortRest == rest && rest.contains(where: { $0 == "(" || $0 == " " }) { return text }
            return "\(closure)\(number) in " + shortRest
        }
        let forwarder = "partial apply forwarder for "
        if text.hasPrefix(forwarder) {
            let rest = String(text.dropFirst(forwarder.count))
            let short = short(demangled: rest)
            return short == rest ? text : "partial apply for " + short
        }
        var prefix = ""
        var body = Substring(text)
        for keyword in ["static ", "class "] where body.hasPrefix(keyword) {
            prefix = keyword
            body = body.dropFirst(keyword.count)
        }
        let open = topLevel(body, "(")
        let typed = topLevel(body, " : ")
        let qualified: Substring
        var labels: String?
        if let typed, open.map({ typed < $0 }) ?? true {
            // An accessor: `Module.Type.property.getter : Type`.
            qualified = body[..<typed]
        } else if let open, let close = closing(body, from: open) {
            // A function: `Module.name(label: Type, Type) async throws -> Result`.
            let after = body[body.index(after: close)...]
            guard topLevel(after, " -> ") != nil else { return text }
            qualified = body[..<open]
            labels = parameters(body[body.index(after: open)..<close])
        } else {
            return text
        }
        // One name (not `variable initialization expression of …`, a descriptor's words), without its module: the
        // first name before a dot, outside angle brackets.
        guard topLevel(qualified, " ") == nil, let dot = topLevel(qualified, ".") else { return text }
        let path = withoutWhereClauses(qualified[qualified.index(after: dot)...])
        return prefix + path + (labels.map { "(\($0))" } ?? "")
    }

    /// `label:` for each parameter of a full signature's list (`_:` for one without a label).
    private static func parameters(_ list: Substring) -> String {
        var result = ""
        var depth = 0
        var start = list.startIndex
        var index = list.startIndex
        func add(_ parameter: Substring) {
            let trimmed = parameter.drop { $0 == " " }
            guard !trimmed.isEmpty else { return }
            if let colon = trimmed.firstIndex(of: ":"),
                trimmed[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }),
                !trimmed[..<colon].isEmpty
            {
                result += trimmed[..<colon] + ":"
            } else {
                result += "_:"
            }
        }
        while index < list.endIndex {
            let character = list[index]
            if "([<".contains(character) { depth += 1 }
            if ")]".contains(character) || (character == ">" && !isArrow(list, index)) { depth -= 1 }
            if character == "," && depth == 0 {
                add(list[start..<index])
                start = list.index(after: index)
            }
            index = list.index(after: index)
        }
        add(list[start...])
        return result
    }

    /// `name` without the `where` requirements of its generic parameter lists (`<A where A: P>` reads `<A>`).
    private static func withoutWhereClauses(_ name: Substring) -> String {
        var result = ""
        var skipping: Int?
        var depth = 0
        var index = name.startIndex
        while index < name.endIndex {
            let character = name[index]
            if character == "<" { depth += 1 }
            if character == ">" && !isArrow(name, index) {
                if skipping == depth { skipping = nil }
                depth -= 1
            }
            if skipping == nil, name[index...].hasPrefix(" where "), depth > 0 { skipping = depth }
            if skipping == nil { result.append(character) }
            index = name.index(after: index)
        }
        return result
    }

    /// The first `needle` in `text` outside brackets of any kind.
    private static func topLevel(_ text: Substring, _ needle: String) -> Substring.Index? {
        var depth = 0
        var index = text.startIndex
        while index < text.endIndex {
            if depth == 0 && text[index...].hasPrefix(needle) { return index }
            let character = text[index]
            if "([<".contains(character) { depth += 1 }
            if ")]".contains(character) || (character == ">" && !isArrow(text, index)) { depth = max(0, depth - 1) }
            index = text.index(after: index)
        }
        return nil
    }

    private static func topLevel(_ text: String, _ needle: String) -> String.Index? {
        topLevel(text[...], needle)
    }

    /// The `)` that closes the `(` at `open`.
    private static func closing(_ text: Substring, from open: Substring.Index) -> Substring.Index? {
        var depth = 0
        var index = open
        while index < text.endIndex {
            let character = text[index]
            if "([<".contains(character) { depth += 1 }
            if ")]".contains(character) || (character == ">" && !isArrow(text, index)) {
                depth -= 1
                if depth == 0 { return character == ")" ? index : nil }
            }
            index = text.index(after: index)
        }
        return nil
    }

    /// Whether the `>` at `index` is the end of a `->`.
    private static func isArrow(_ text: Substring, _ index: Substring.Index) -> Bool {
        index > text.startIndex && text[text.index(before: index)] == "-"
    }
}
