import CohorlyCrashModel
import CohorlySymbols

/// The largest report file read (the recorder caps its reports at 512 KiB; salvaged and hand-made reports get
/// room to spare).
let maximumReportBytes = 64 << 20

/// Why a report could not be read.
struct ReportError: Error {
    let reason: String
}

extension CrashReport {
    /// Reads a report (format v1 or v2, the crash model's reader) named `path`; the error is a one-line reason.
    static func read(_ bytes: [UInt8], name path: String) throws(ReportError) -> CrashReport {
        do {
            return try CrashReport.read(bytes, requiringHeader: false)
        } catch .unsupportedFormat(let format) {
            let known = CrashReportFormat.readable.sorted().joined(separator: " or ")
            throw ReportError(reason: "\(path): unsupported report format '\(format)' (expected \(known))")
        } catch {
            throw ReportError(reason: "\(path): not a crash report (\(error))")
        }
    }
}

/// The bytes of a file named on the command line: only a regular file (a FIFO or device is refused without
/// blocking), at most ``maximumReportBytes``.
func readFile(_ path: String) throws(ReportError) -> [UInt8] {
    do {
        return try RegularFile(path: path).readAll(limit: maximumReportBytes)
    } catch {
        if case .cannotOpen(_, let reason) = error { throw ReportError(reason: "\(path): cannot read: \(reason)") }
        throw ReportError(reason: error.description)
    }
}
