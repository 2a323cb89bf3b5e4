@_exported import CohorlyCrashModel
import Foundation

extension CrashReport {
    /// Reads `data` as a report (format v1 or v2: ``CrashReport/read(_:)-(_:)`` of the crash model).
    /// - Throws: ``CrashReportStore/ReportError`` describing why it is not one (without a file name).
    public static func decode(_ data: Data) throws(CrashReportStore.ReportError) -> CrashReport {
        do {
            return try CrashReport.read([UInt8](data))
        } catch .unsupportedFormat(let format) {
            throw .unsupportedFormat(file: "", format: format)
        } catch {
            throw .corrupt(file: "", reason: error.description)
        }
    }
}
