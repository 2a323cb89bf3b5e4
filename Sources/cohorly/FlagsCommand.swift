import CohorlyCollectorAPI
import CohorlyCommandLine
import CohorlyJSON
import CohorlySymbols
import Foundation

/// The options every `cohorly flags` command takes, after its own.
private let collectorOptions = [CollectorOptions.host] + CollectorOptions.secret("admin")

/// A `flags` command's KEY.
private let flagKey = CommandPositionals("KEY", count: 1...1, missing: "missing flag KEY")

/// The collector `parsed` names; nil after printing the usage error of `spec`.
private func collector(_ parsed: ParsedArguments, _ spec: CommandSpec) -> CollectorRequest? {
    do {
        return try CollectorRequest(parsed: parsed)
    } catch {
        _ = spec.usageError(error.reason)
        return nil
    }
}

/// `/api/flags/<key>` with the key percent-encoded.
private func flagPath(_ key: String) -> String {
    "/api/flags/" + (key.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? key)
}

/// `cohorly flags set KEY …`: creates or replaces a flag definition on the collector.
enum FlagsSetCommand: DeclaredCommand {
    static let spec = CommandSpec(
        words: ["flags", "set"], summary: "Create or replace a feature flag on a collector.", positionals: flagKey,
        about: """
            Rules are tried in order, the first match wins: the --distinct-id list (always on for those ids), then
            --rollout PCT of everyone (the share is the same bucketing every Cohorly SDK uses). Without either, the
            flag is on for everyone; with only --distinct-id, for those ids only.
            """,
        options: [
            CommandOption("--rollout", .word("PCT"), "Share of users the flag is on for, 0 to 100."),
            CommandOption(
                "--variant", .word("NAME:PCT"), "A variant and its share (repeat; shares add up to 100).",
                repeatable: true),
            CommandOption("--payload", .word("JSON"), "The payload served with the flag (a flag without variants)."),
            CommandOption("--distinct-id", .word("ID"), "Always on for this id (repeat).", repeatable: true),
            .flag("--inactive", "Store the flag switched off (evaluates to disabled, reason \"inactive\")."),
        ] + collectorOptions,
        epilogue: "EXIT STATUS: 0 success, 1 the collector could not be reached or refused, 2 usage error.")

    static func run(_ arguments: [String]) -> ExitStatus {
        guard let parsed = spec.parseOrReport(arguments), let request = collector(parsed, spec) else { return .usage }
        let definition: FlagDefinition
        switch definitionFrom(parsed) {
        case .failure(let error): return spec.usageError(error.reason)
        case .success(let value): definition = value
        }
        let answer = request.send("PUT", flagPath(definition.key), body: definition.json.jsonString)
        return CollectorRequest.printed(answer, command: spec.name) { _ in
            print("flag \(TerminalText.escaped(definition.key)) set")
            return .success
        }
    }

    static func definitionFrom(_ parsed: ParsedArguments) -> Result<FlagDefinition, UsageError> {
        let key = parsed.positionals[0]
        func percentage(_ text: String, _ what: String) -> Double? {
            guard let value = Double(text), (0...100).contains(value) else { return nil }
            return value
        }
        var variants: [FlagDefinition.Variant] = []
        for item in parsed.options["--variant"] ?? [] {
            guard let colon = item.lastIndex(of: ":"),
                let share = percentage(String(item[item.index(after: colon)...]), item)
            else { return .failure(UsageError(reason: "invalid --variant \(item) (expected NAME:PCT, PCT 0 to 100)")) }
            variants.append(.init(key: String(item[..<colon]), rolloutPct: share, payload: nil))
        }
        var payload: CohorlyValue?
        if let text = parsed.options["--payload"]?.last {
            guard let value = CohorlyValue(json: text) else {
                return .failure(UsageError(reason: "--payload is not valid JSON"))
            }
            guard variants.isEmpty else {
                return .failure(UsageError(reason: "--payload applies to a flag without variants"))
            }
            payload = value
        }
        var rules: [FlagDefinition.Rule] = []
        if let ids = parsed.options["--distinct-id"] {
            rules.append(.init(distinctIds: ids, rolloutPct: 100, variant: nil))
        }
        if let text = parsed.options["--rollout"]?.last {
            guard let share = percentage(text, "--rollout") else {
                return .failure(UsageError(reason: "invalid --rollout \(text) (expected 0 to 100)"))
            }
            rules.append(.init(distinctIds: nil, rolloutPct: share, variant: nil))
        }
        if rules.isEmpty { rules.append(.init(distinctIds: nil, rolloutPct: 100, variant: nil)) }
        let definition = FlagDefinition(
            key: key, active: !parsed.flags.contains("--inactive"), variants: variants, rules: rules, payload: payload)
        if let problem = definition.problem { return .failure(UsageError(reason: problem)) }
        return .success(definition)
    }
}

/// `cohorly flags list`: the flags a collector holds.
enum FlagsListCommand: DeclaredCommand {
    static let spec = CommandSpec(
        words: ["flags", "list"], summary: "List the feature flags of a collector.",
        options: collectorOptions + [CollectorOptions.json],
        epilogue: "EXIT STATUS: 0 success, 1 the collector could not be reached or refused, 2 usage error.")

    static func run(_ arguments: [String]) -> ExitStatus {
        guard let parsed = spec.parseOrReport(arguments) else { return .usage }
        return CollectorRequest.read(parsed, command: spec.name, path: "/api/flags") { text, request in
            guard let list = CohorlyValue(json: text)?["flags"]?.arrayValue else {
                Console.error("cohorly: unexpected answer from \(request.host)")
                return .failure
            }
            print(["KEY".padded(32), "ACTIVE".padded(6), "RULES".padded(40), "VARIANTS"].joined(separator: " "))
            for item in list {
                guard let flag = try? FlagDefinition(json: item) else { continue }
                print(
                    [
                        TerminalText.escaped(flag.key).padded(32), (flag.active ? "yes" : "no").padded(6),
                        FlagsShowCommand.rules(flag).padded(40), FlagsShowCommand.variants(flag),
                    ].joined(separator: " "))
            }
            return .success
        }
    }
}

/// `cohorly flags show KEY`: one flag's definition.
enum FlagsShowCommand: DeclaredCommand {
    static let spec = CommandSpec(
        words: ["flags", "show"], summary: "Show one feature flag of a collector.", positionals: flagKey,
        options: collectorOptions + [CollectorOptions.json],
        epilogue: "EXIT STATUS: 0 success, 1 no such flag or the collector could not be reached, 2 usage error.")

    static func run(_ arguments: [String]) -> ExitStatus {
        guard let parsed = spec.parseOrReport(arguments) else { return .usage }
        let path = flagPath(parsed.positionals[0])
        return CollectorRequest.read(parsed, command: spec.name, path: path) { text, request in
            guard let json = CohorlyValue(json: text), let flag = try? FlagDefinition(json: json) else {
                Console.error("cohorly: unexpected answer from \(request.host)")
                return .failure
            }
            print("key:      \(TerminalText.escaped(flag.key))")
            print("active:   \(flag.active ? "yes" : "no")")
            print("rules:    \(rules(flag))")
            print("variants: \(variants(flag))")
            if let payload = flag.payload { print("payload:  \(TerminalText.escaped(payload.jsonString))") }
            return .success
        }
    }

    /// `ids [a, b] 100% → x; 30%`.
    static func rules(_ flag: FlagDefinition) -> String {
        flag.rules.map { rule in
            var text = rule.distinctIds.map { "ids [\($0.map(TerminalText.escaped).joined(separator: ", "))] " } ?? ""
            text += percent(rule.rolloutPct)
            if let variant = rule.variant { text += " → " + TerminalText.escaped(variant) }
            return text
        }.joined(separator: "; ")
    }

    /// `control 50%, test 50%`, or `-`.
    static func variants(_ flag: FlagDefinition) -> String {
        flag.variants.isEmpty
            ? "-"
            : flag.variants.map { "\(TerminalText.escaped($0.key)) \(percent($0.rolloutPct))" }.joined(separator: ", ")
    }

    private static func percent(_ value: Double) -> String {
        value.rounded() == value ? "\(Int(value))%" : "\(value)%"
    }
}

/// `cohorly flags delete KEY`.
enum FlagsDeleteCommand: DeclaredCommand {
    static let spec = CommandSpec(
        words: ["flags", "delete"], summary: "Delete a feature flag from a collector.", positionals: flagKey,
        options: collectorOptions,
        epilogue: "EXIT STATUS: 0 success, 1 no such flag or the collector could not be reached, 2 usage error.")

    static func run(_ arguments: [String]) -> ExitStatus {
        guard let parsed = spec.parseOrReport(arguments), let request = collector(parsed, spec) else { return .usage }
        let key = parsed.positionals[0]
        return CollectorRequest.printed(request.send("DELETE", flagPath(key)), command: spec.name) { _ in
            print("flag \(TerminalText.escaped(key)) deleted")
            return .success
        }
    }
}
