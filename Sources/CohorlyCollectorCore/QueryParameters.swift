/// A request the collector refuses with 400 and a message (a query parameter out of range, a bad field).
struct BadRequest: Error {
    /// What is wrong, for the client.
    let message: String
}

extension HTTPRequest {
    /// The query parameter `name` as an integer in `range`, or `absent` when the request has none. A value that is
    /// not a decimal integer or lies outside `range` throws, never traps.
    func integer(_ name: String, in range: ClosedRange<Int>, absent: Int) throws(BadRequest) -> Int {
        guard let text = query[name] else { return absent }
        guard let value = Int(text), range.contains(value) else {
            throw BadRequest(
                message: "invalid \(name)=\(text.prefix(40)): expected an integer from \(range.lowerBound) to "
                    + "\(range.upperBound)")
        }
        return value
    }

    /// Like `integer(_:in:absent:)`, nil when absent.
    func integer(_ name: String, in range: ClosedRange<Int>) throws(BadRequest) -> Int? {
        query[name] == nil ? nil : try integer(name, in: range, absent: 0)
    }
}
