import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore
@testable import CohorlySentryIngestion

/// Envelope framing as Relay reads it (a header line, then per item a header line with `type` and optional `length`,
/// then the payload).
@Suite struct SentryEnvelopeTests {
    func parse(_ text: String) throws(SentryEnvelope.Invalid) -> SentryEnvelope {
        try SentryEnvelope(parsing: Array(text.utf8)[...])
    }

    func reason(_ text: String) -> String? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func lengthPrefixedAndNewlineTerminatedItems() throws {
        // A length-prefixed payload may hold newlines; one without a length ends at the next newline; the last
        // item may end the envelope without a newline.
        let envelope = try parse(
            "{\"event_id\":\"9ec79c33ec9942ab8353589fcb2e04dc\"}\n{\"type\":\"attachment\",\"length\":7}\nab\ncd\ne\n"
                + "{\"type\":\"session\"}\n{\"sid\":\"x\"}\n{\"type\":\"event\",\"length\":2}\n{}")
        #expect(envelope.items.map(\.type) == ["attachment", "session", "event"])
        #expect(
            envelope.items.map { String(decoding: $0.payload, as: UTF8.self) } == [
                "ab\ncd\ne", "{\"sid\":\"x\"}", "{}",
            ])
        #expect(envelope.header["event_id"]?.stringValue == "9ec79c33ec9942ab8353589fcb2e04dc")
    }

    @Test func headerOnlyAndTrailingWhiteSpace() throws {
        #expect(try parse("{}").items.isEmpty)
        #expect(try parse("{}\n").items.isEmpty)
        #expect(try parse("{}\n{\"type\":\"x\",\"length\":0}\n\n\n").items.map(\.payload.count) == [0])
        // A header at the very end with no payload line: an empty payload.
        #expect(try parse("{}\n{\"type\":\"x\"}").items.map(\.payload.count) == [0])
    }

    @Test func framingErrorsAreRefused() {
        #expect(reason("not json\n")?.contains("envelope header") == true)
        #expect(reason("[]\n")?.contains("not a JSON object") == true)
        #expect(reason("{}\n{\"length\":2}\nab\n")?.contains("missing type") == true)
        #expect(reason("{}\n{\"type\":\"event\",\"length\":20}\n{}\n")?.contains("runs past the end") == true)
        #expect(reason("{}\n{\"type\":\"event\",\"length\":2}\n{}X\n")?.contains("not followed by a newline") == true)
        #expect(reason("{}\n{\"type\":\"event\",\"length\":-1}\n")?.contains("invalid length") == true)
        #expect(reason("{}\n{\"type\":\"event\",\"length\":\"2\"}\n{}\n")?.contains("invalid length") == true)
        #expect(reason("{}\n{\"type\":\"event\"\n") != nil)
        #expect(reason("{\"event_id\":\"nope\"}\n")?.contains("event_id") == true)
        #expect(reason("{\"sent_at\":\"yesterday\"}\n")?.contains("sent_at") == true)
    }

    @Test func aRepeatedKnownFieldIsRefusedAnUnknownOneIsNot() {
        let sentAt = "\"sent_at\":\"2026-12-01T10:00:00Z\""
        #expect(reason("{\(sentAt),\(sentAt)}\n")?.contains("duplicate field `sent_at`") == true)
        #expect(
            reason("{}\n{\"type\":\"event\",\"type\":\"session\"}\n{}\n")?.contains("duplicate field `type`") == true)
        #expect(reason("{\"custom\":1,\"custom\":2}\n") == nil)
    }

    @Test func eventIdsAreReadAsTheDashedFormOtherWiresStore() {
        let dashed = "9ec79c33-ec99-42ab-8353-589fcb2e04dc"
        #expect(SentryEnvelope.eventId("9EC79C33EC9942AB8353589FCB2E04DC") == dashed)
        #expect(SentryEnvelope.eventId(dashed.uppercased()) == dashed)
        #expect(SentryEnvelope.eventId("9ec79c33ec9942ab8353589fcb2e04d") == nil)
        #expect(SentryEnvelope.eventId("9ec79c33ec9942ab8353589fcb2e04dg") == nil)
    }

    @Test func theKeyComesFromTheHeaderTheQueryOrTheDSN() {
        let header = HTTPRequest(
            method: "POST", path: "/api/1/envelope/", query: ["sentry_key": "q"],
            headers: ["x-sentry-auth": "Sentry sentry_version=7,sentry_client=x/1, sentry_key=h"])
        #expect(SentryAuth.key(header, envelopeHeader: nil) == "h")
        let query = HTTPRequest(method: "POST", path: "/api/1/envelope/", query: ["sentry_key": "q"])
        #expect(SentryAuth.key(query, envelopeHeader: ["dsn": "https://d@h/1"]) == "q")
        let bare = HTTPRequest(method: "POST", path: "/api/1/envelope/")
        #expect(SentryAuth.key(bare, envelopeHeader: ["dsn": "https://d:secret@sentry.example/prefix/1"]) == "d")
        #expect(SentryAuth.key(bare, envelopeHeader: ["dsn": "https://sentry.example/1"]) == nil)
        #expect(SentryAuth.key(bare, envelopeHeader: nil) == nil)
        #expect(SentryAuth.headerKey("Bearer sentry_key=x") == nil)
        // The header as Relay reads it: the scheme in any case, blanks around names and values, pairs in any order,
        // a pair with nothing after `=` passed over.
        #expect(SentryAuth.headerKey("  SENTRY sentry_key =\tk1 , sentry_version=7") == "k1")
        #expect(SentryAuth.headerKey("sentry sentry_key=, sentry_key=k2") == "k2")
        #expect(SentryAuth.headerKey("Sentry sentry_key=k=3") == "k=3")
        #expect(SentryAuth.headerKey("Sentry sentry_key= ") == nil)
        #expect(SentryAuth.headerKey("Sentry sentry_version=7") == nil)
        #expect(SentryAuth.headerKey("Sentry") == nil)
    }

    @Test func theRouteNamesANumericProject() {
        #expect(SentryIngestion.projectId("/api/42/envelope/") == "42")
        #expect(SentryIngestion.projectId("/api/42/envelope") == "42")
        #expect(SentryIngestion.projectId("/api/x/envelope/") == nil)
        #expect(SentryIngestion.projectId("/api/42/store/") == nil)
        #expect(SentryIngestion.projectId("/api/crashes") == nil)
    }
}
