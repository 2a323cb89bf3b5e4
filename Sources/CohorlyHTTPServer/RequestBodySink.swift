/// Receives one request body piece by piece, on the connection's thread, then answers.
package protocol RequestBodySink: AnyObject {
    /// The next piece of the body (as sent: still compressed when the client compressed it). False drops the
    /// connection at once, without an answer (a body far past any limit).
    func append(_ bytes: UnsafeRawBufferPointer) -> Bool
    /// The whole body arrived; `request` has an empty body. Nil drops the connection without an answer.
    func finish(_ request: HTTPRequest) -> HTTPResponse?
}

/// An upload refused from its headers: `answer` is sent at once and the body is never read (nil: the connection
/// is dropped without an answer).
package final class RejectedUpload: RequestBodySink {
    package let answer: HTTPResponse?

    package init(_ answer: HTTPResponse?) { self.answer = answer }

    package func append(_ bytes: UnsafeRawBufferPointer) -> Bool { false }

    package func finish(_ request: HTTPRequest) -> HTTPResponse? { answer }
}
