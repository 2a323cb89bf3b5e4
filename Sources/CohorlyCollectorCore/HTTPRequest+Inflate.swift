import CohorlyCompression
import Foundation

/// Why a request body could not be decoded.
package enum BodyDecodeFailure: Error {
    /// Inflated, it passed this many bytes.
    case tooLarge(Int)
    /// zlib's reason.
    case corrupt(String)
    /// A `Content-Encoding` other than gzip, deflate or identity.
    case unsupported(String)
}

extension HTTPRequest {
    /// The body, inflated when `Content-Encoding` is gzip or deflate, stopping as soon as it passes `limit`
    /// bytes (the collector's bound on an inflated body: max(10 MiB, its body limit)).
    func decodedBody(limit: Int) -> Result<[UInt8], BodyDecodeFailure> {
        let encoding = header("Content-Encoding")?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        switch encoding {
        case "", "identity": return .success(body)
        case "gzip", "deflate":
            var output: [UInt8] = []
            // Room for the largest body up front: growing by doubling held the old and the new copy at once (up to
            // three times the body); untouched pages of the reservation cost nothing.
            output.reserveCapacity(limit)
            do {
                let stream = try ZlibStream(.inflate)
                try body.withUnsafeBytes { bytes in
                    try stream.process(bytes) { piece in
                        guard output.count + piece.count <= limit else { throw BodyDecodeFailure.tooLarge(limit) }
                        output += piece
                    }
                }
                try stream.finish { output += $0 }
            } catch let failure as BodyDecodeFailure {
                return .failure(failure)
            } catch {
                return .failure(.corrupt(String(describing: error)))
            }
            return .success(output)
        default: return .failure(.unsupported(encoding))
        }
    }
}

extension CollectorConfiguration {
    /// The most bytes an inflated body may hold: max(10 MiB, `maxBodyBytes`).
    package var maxInflatedBytes: Int { max(10 << 20, maxBodyBytes) }
}
