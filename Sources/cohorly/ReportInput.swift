import CohorlySymbols
#if canImport(FoundationEssentials)
    import FoundationEssentials  // JSONDecoder without libFoundation + ICU: faster CLI start-up
#else
    import Foundation
#endif

/// The fields of a crash report (format `cohorly-crash/1`, docs/report-format.md) that `symbolicate` needs.
/// Kept in this one file so it can be swapped for the shared `CrashReport` model of `CohorlyCrash`.
struct ReportInput: Decodable {
    struct Signal: Decodable {
        var number: Int?
        var name: String?
        var code: Int?
        var address: String?
    }

    struct CxxException: Decodable {
        var type: String?
        var what: String?
    }

    struct Thread: Decodable {
        var tid: Int?
        var name: String?
        var crashed: Bool?
        var frames: [String]
        var truncated: Bool?
    }

    struct Module: Decodable {
        var path: String
        var base: String
        var size: String
        var buildId: String?

        enum CodingKeys: String, CodingKey {
            case path, base, size
            case buildId = "build_id"
        }
    }

    var format: String
    var executable: String?
    var mechanism: String?
    var signal: Signal?
    var message: String?
    var cxx: CxxException?
    var crashedThread: Thread?
    var threads: [Thread]?
    var modules: [Module]?
    var complete: Bool?

    enum CodingKeys: String, CodingKey {
        case format, executable, mechanism, signal, message, cxx, threads, modules, complete
        case crashedThread = "crashed_thread"
    }

    /// The largest report file read (the recorder caps its reports at 512 KiB; salvaged and hand-made
    /// reports get room to spare).
    static let maximumBytes = 64 << 20

    /// The report format this reader understands.
    static let supportedFormat = "cohorly-crash/1"

    /// Decodes a report read from `path`; the error is a one-line reason.
    static func decode(_ bytes: [UInt8], name path: String) throws(ReportError) -> ReportInput {
        let data = Data(bytes)
        let report: ReportInput
        do {
            report = try JSONDecoder().decode(ReportInput.self, from: data)
        } catch {
            throw ReportError(reason: "\(path): not a crash report (\(ReportError.describe(error)))")
        }
        guard report.format == supportedFormat else {
            throw ReportError(
                reason:
                    "\(path): unsupported report format '\(report.format)' (expected \(supportedFormat))")
        }
        return report
    }
}

/// Why a report could not be read.
struct ReportError: Error {
    let reason: String

    static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context):
            return "invalid JSON: " + context.debugDescription
        case DecodingError.keyNotFound(let key, _): return "missing key '\(key.stringValue)'"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return "wrong type at '\(path)'"
        default: return "\(error)"
        }
    }
}

/// The bytes of a file named on the command line: only a regular file (a FIFO or device is refused without blocking), at most
/// ``ReportInput/maximumBytes``.
func readFile(_ path: String) throws(ReportError) -> [UInt8] {
    do {
        return try RegularFile(path: path).readAll(limit: ReportInput.maximumBytes)
    } catch {
        if case .cannotOpen(_, let reason) = error { throw ReportError(reason: "\(path): cannot read: \(reason)") }
        throw ReportError(reason: error.description)
    }
}
