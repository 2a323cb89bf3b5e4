import Foundation
import CohorlyJSON

extension Date: CohorlyPropertyValue {
    /// ISO 8601 text in UTC with milliseconds (`"2026-11-30T10:34:59.327Z"`); `null` for a date no `Int64` of
    /// milliseconds can hold.
    public var cohorlyValue: CohorlyValue {
        guard let milliseconds = Int64(exactly: (timeIntervalSince1970 * 1000).rounded()),
            milliseconds > Int64.min / 2, milliseconds < Int64.max / 2
        else { return .null }
        // Whole seconds (rounded down, also before 1970) by Foundation, milliseconds appended: formatting the
        // fraction from the Double would print 0.327 s as .326.
        let fraction = ((milliseconds % 1000) + 1000) % 1000
        let seconds = (milliseconds - fraction) / 1000
        let text = Date(timeIntervalSince1970: Double(seconds)).formatted(Date.ISO8601FormatStyle())
        guard text.hasSuffix("Z") else { return .string(text) }
        let digits = String(fraction)
        return .string(text.dropLast() + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z")
    }
}

extension URL: CohorlyPropertyValue {
    /// The absolute URL as a JSON string.
    public var cohorlyValue: CohorlyValue { .string(absoluteString) }
}

extension UUID: CohorlyPropertyValue {
    /// The UUID as lowercase text (`"7c4e0b1a-…"`, like `$insert_id`).
    public var cohorlyValue: CohorlyValue { .string(uuidString.lowercased()) }
}
