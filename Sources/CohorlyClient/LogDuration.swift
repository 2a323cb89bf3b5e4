import Foundation

/// A delay as the debug log prints it: rounded for a reader (`42 ms`, `2.3 s`, `600.0 s`), never a double's
/// seventeen digits (`0.04246912 s`) — jitter makes nearly every computed delay such a number.
enum LogDuration {
    /// Milliseconds below one second, else seconds with one decimal.
    static func text(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "\(seconds) s" }
        if seconds < 1 { return "\(Int((seconds * 1000).rounded())) ms" }
        return String(format: "%.1f s", seconds)
    }
}
