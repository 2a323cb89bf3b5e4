import Foundation
import Testing

@testable import Cohorly
@testable import CohorlyClient
@testable import CohorlySentry

/// The DSN: every part read, every malformed part a clear error, the key never shown.
@Suite struct SentryConfigurationTests {
    @Test func aDSNIsReadPartByPart() throws {
        let plain = try SentryConfiguration(dsn: "https://abc123@o1.ingest.sentry.io/456")
        #expect(plain.scheme == "https")
        #expect(plain.host == "o1.ingest.sentry.io")
        #expect(plain.port == nil)
        #expect(plain.pathPrefix == "")
        #expect(plain.projectId == "456")
        #expect(plain.publicKey == "abc123")
        #expect(plain.environment == "production")
        #expect(plain.envelopeURL.absoluteString == "https://o1.ingest.sentry.io/api/456/envelope/")
        let prefixed = try SentryConfiguration(dsn: "http://key:secret@127.0.0.1:9000/sentry/relay/7")
        #expect(prefixed.port == 9000)
        #expect(prefixed.pathPrefix == "/sentry/relay")
        #expect(prefixed.publicKey == "key")
        #expect(prefixed.envelopeURL.absoluteString == "http://127.0.0.1:9000/sentry/relay/api/7/envelope/")
        #expect(prefixed.baseURL.absoluteString == "http://127.0.0.1:9000/sentry/relay")
        #expect(prefixed.dsn == "http://key@127.0.0.1:9000/sentry/relay/7")
    }

    @Test(
        arguments: [
            ("", SentryConfigurationError.empty),
            ("o1.ingest.sentry.io/1", .missingScheme),
            ("ftp://k@host/1", .unsupportedScheme("ftp")),
            ("https://host/1", .missingPublicKey),
            ("https://:secret@host/1", .missingPublicKey),
            ("https://k@/1", .missingHost),
            ("https://k@host:99999/1", .invalidPort("99999")),
            ("https://k@host:abc/1", .invalidPort("abc")),
            ("https://k@host", .missingProjectId),
            ("https://k@host/", .missingProjectId),
            ("https://k@host/project", .invalidProjectId("project")),
        ])
    func eachMalformedPartIsAClearError(dsn: String, expected: SentryConfigurationError) {
        #expect(throws: expected) { try SentryConfiguration(dsn: dsn) }
        #expect(!expected.description.isEmpty)
    }

    @Test func theKeyIsNeverShown() throws {
        var sentry = try SentryConfiguration(dsn: "https://topsecretkey@o1.ingest.sentry.io/456")
        sentry.dist = "7"
        #expect(!String(describing: sentry).contains("topsecretkey"))
        #expect(!String(reflecting: sentry.description).contains("topsecretkey"))
        #expect(!sentry.persisted.contains("topsecretkey"))
        let error = #expect(throws: SentryConfigurationError.self) {
            try SentryConfiguration(dsn: "https://topsecretkey@host/x")
        }
        #expect(error.map { !$0.description.contains("topsecretkey") } ?? false)
    }

    @Test func theCrashSenderRestoresTheSameDestination() throws {
        var sentry = try SentryConfiguration(dsn: "http://key@127.0.0.1:9000/sentry/7")
        sentry.environment = "staging"
        sentry.dist = "42"
        sentry.compression = true
        let restored = DestinationRegistry.restore(sentry.persisted, host: sentry.baseURL, token: "key")
        let destination = try #require(restored as? SentryDestination)
        #expect(destination.configuration == sentry)
    }
}
