import Foundation

/// Sentry's own event normalizer (PyPI `sentry-relay`, `sentry_relay.processing.StoreNormalizer`, installed by
/// scripts/install-deps) on the events of `eventsJSON` (a JSON array): one line per event it reports errors for
/// (`<index> <errors as JSON>`); empty when it accepts them all. Runs off the cooperative pool.
public func sentryNormalizerErrors(eventsJSON: String) async throws -> [String] {
    let input = FileManager.default.temporaryDirectory.appendingPathComponent("sentry-events-\(UUID().uuidString).json")
    try Data(eventsJSON.utf8).write(to: input)
    defer { try? FileManager.default.removeItem(at: input) }
    let script = """
        import json, sys
        from sentry_relay.processing import StoreNormalizer
        normalizer = StoreNormalizer(project_id=42)
        for index, event in enumerate(json.load(open(sys.argv[1]))):
            errors = normalizer.normalize_event(event).get("errors") or []
            if errors:
                print(index, json.dumps(errors))
        """
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "-c", script, input.path]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    let data = try await runReadingToEnd(process, reading: output)
    let text = String(decoding: data, as: UTF8.self)
    guard process.terminationStatus == 0 else {
        return ["sentry-relay failed (scripts/install-deps installs it): \(text)"]
    }
    return text.split(separator: "\n").map(String.init)
}

/// Sentry's own event normalizer on the events of `eventsJSON` (a JSON array): each event as it normalized it
/// (JSON text, one per event, with its `errors` when it had some). Runs off the cooperative pool.
public func sentryNormalized(eventsJSON: String) async throws -> [String] {
    let input = FileManager.default.temporaryDirectory.appendingPathComponent("sentry-events-\(UUID().uuidString).json")
    try Data(eventsJSON.utf8).write(to: input)
    defer { try? FileManager.default.removeItem(at: input) }
    let script = """
        import json, sys
        from sentry_relay.processing import StoreNormalizer
        normalizer = StoreNormalizer(project_id=42)
        for event in json.load(open(sys.argv[1])):
            print(json.dumps(normalizer.normalize_event(event)))
        """
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "-c", script, input.path]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    let data = try await runReadingToEnd(process, reading: output)
    let text = String(decoding: data, as: UTF8.self)
    guard process.terminationStatus == 0 else {
        return ["sentry-relay failed (scripts/install-deps installs it): \(text)"]
    }
    return text.split(separator: "\n").map(String.init)
}
