import CohorlyCollectorAPI
import CohorlyCommandLine
import CohorlyJSON
import CohorlySymbols
import Foundation

/// The options every `cohorly flags` command takes.
private let collectorOptions: Set<String> = ["--host", "--auth-token", "--auth-token-file"]
private let collectorHelp = """
      --host URL        The collector (default COHORLY_HOST, else http://127.0.0.1:4000).
      --auth-token-file F  The collector's admin secret, from a file (default COHORLY_AUTH_TOKEN).
      -h, --help        Show this help.
    """

/// Parses a `flags` command's arguments and its collector; the usage error's exit status otherwise.
private func flagsArguments(
    _ arguments: [String], command: String, flags: Set<String> = [], options: Set<String> = [],
    positionals: ClosedRange<Int>
) -> FlagsArguments {
    do {
        let parsed = try ParsedArguments.parse(arguments, flags: flags, options: options.union(collectorOptions))
        guard positionals.contains(parsed.positionals.count) else {
            let reason =
                parsed.positionals.count < positionals.lowerBound
                ? "missing flag KEY" : "unexpected argument '\(parsed.positionals[positionals.upperBound])'"
            return .exit(Console.usageError(reason, command: command))
        }
        return .parsed(parsed, try CollectorRequest(parsed: parsed))
    } catch {
        return .exit(Console.usageError(error.reason, command: command))
    }
}

/// A `flags` command's parsed arguments, or the exit status of a usage error.
private enum FlagsArguments {
    case parsed(ParsedArguments, CollectorRequest)
    case exit(ExitStatus)
}

/// `/api/flags/<key>` with the key percent-encoded.
private func flagPath(_ key: String) -> String {
    "/api/flags/" + (key.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? key)
}

/// `cohorly flags set KEY …`: creates or replaces a flag definition on the collector.
enum FlagsSetCommand: Command {
    static let words = ["flags", "set"]
    static let summary = "Create or replace a feature flag on a collector."
    static let help = """
        USAGE: cohorly flags set KEY [--rollout PCT] [--variant NAME:PCT]… [--payload JSON] [--distinct-id ID]…
                                 [--inactive] [--host URL] [--auth-token-file F]

        Rules are tried in order, the first match wins: the --distinct-id list (always on for those ids), then
        --rollout PCT of everyone (the share is the same bucketing every Cohorly SDK uses). Without either, the
        flag is on for everyone; with only --distinct-id, for those ids only.

        OPTIONS:
          --rollout PCT     Share of users the flag is on for, 0 to 100.
          --variant NAME:PCT  A variant and its share (repeat; shares add up to 100).
          --payload JSON    The payload served with the flag (a flag without variants).
          --distinct-id ID  Always on for this id (repeat).
          --inactive        Store the flag switched off (evaluates to disabled, reason "inactive").
        \(collectorHelp)

        EXIT STATUS: 0 success, 1 the collector could not be reached or refused, 2 usage error.
        """

    static func run(_ arguments: [String]) -> ExitStatus {
        let command = "flags set"
        let parsed: ParsedArguments
        let request: CollectorRequest
        switch flagsArguments(
            arguments, command: command, flags: ["--inactive"],
            options: ["--rollout", "--variant", "--payload", "--distinct-id"], positionals: 1...1)
        {
        case .exit(let status): return status
        case .parsed(let arguments, let collector): (parsed, request) = (arguments, collector)
        }
        let definition: FlagDefinition
        switch definitionFrom(parsed) {
        case .failure(let error): return Console.usageError(error.reason, command: command)
        case .success(let value): definition = value
        }
        switch request.send("PUT", flagPath(definition.key), body: definition.json.jsonString) {
        case .failure(.usage(let reason)): return Console.usageError(reason, command: command)
        case .failure(.failed): return .failure
        case .success:
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
enum FlagsListCommand: Command {
    static let words = ["flags", "list"]
    static let summary = "List the feature flags of a collector."
    static let help = """
        USAGE: cohorly flags list [--host URL] [--auth-token-file F] [--json]

        OPTIONS:
          --json            Print the collector's JSON answer.
        \(collectorHelp)

        EXIT STATUS: 0 success, 1 the collector could not be reached or refused, 2 usage error.
        """

    static func run(_ arguments: [String]) -> ExitStatus {
        let parsed: ParsedArguments
        switch flagsArguments(arguments, command: "flags list", flags: ["--json"], positionals: 0...0) {
        case .exit(let status): return status
        case .parsed(let arguments, _): parsed = arguments
        }
        return CollectorRequest.read(parsed, command: "flags list", path: "/api/flags") { text, request in
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
enum FlagsShowCommand: Command {
    static let words = ["flags", "show"]
    static let summary = "Show one feature flag of a collector."
    static let help = """
        USAGE: cohorly flags show KEY [--host URL] [--auth-token-file F] [--json]

        OPTIONS:
          --json            Print the collector's JSON answer.
        \(collectorHelp)

        EXIT STATUS: 0 success, 1 no such flag or the collector could not be reached, 2 usage error.
        """

    static func run(_ arguments: [String]) -> ExitStatus {
        let parsed: ParsedArguments
        switch flagsArguments(arguments, command: "flags show", flags: ["--json"], positionals: 1...1) {
        case .exit(let status): return status
        case .parsed(let arguments, _): parsed = arguments
        }
        let path = flagPath(parsed.positionals[0])
        return CollectorRequest.read(parsed, command: "flags show", path: path) { text, request in
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
enum FlagsDeleteCommand: Command {
    static let words = ["flags", "delete"]
    static let summary = "Delete a feature flag from a collector."
    static let help = """
        USAGE: cohorly flags delete KEY [--host URL] [--auth-token-file F]

        OPTIONS:
        \(collectorHelp)

        EXIT STATUS: 0 success, 1 no such flag or the collector could not be reached, 2 usage error.
        """

    static func run(_ arguments: [String]) -> ExitStatus {
        let key: String
        let request: CollectorRequest
        switch flagsArguments(arguments, command: "flags delete", positionals: 1...1) {
        case .exit(let status): return status
        case .parsed(let arguments, let collector): (key, request) = (arguments.positionals[0], collector)
        }
        switch request.send("DELETE", flagPath(key)) {
        case .failure(.usage(let reason)): return Console.usageError(reason, command: "flags delete")
        case .failure(.failed): return .failure
        case .success:
            print("flag \(TerminalText.escaped(key)) deleted")
            return .success
        }
    }
}
