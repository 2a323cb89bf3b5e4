/// What symbolication found for one frame beside its symbols: the image its address is in and the address looked
/// up in that image's file (``CapturedException/StackFrame/lookup``).
public struct FrameLookup: Sendable, Equatable {
    /// The image's path, when the address is inside a known image.
    public var imagePath: String?
    /// The image's load address.
    public var imageBase: UInt64?
    /// The file-relative address looked up (after the return-address adjustment).
    public var fileAddress: UInt64?
    /// Whether the frame's ``CapturedException/StackFrame/inApp`` was decided; false for a frame read from a
    /// symbolicator that did not say (its readers then decide by the executable, or not at all).
    public var decidesInApp: Bool

    /// A lookup's answer.
    public init(imagePath: String?, imageBase: UInt64?, fileAddress: UInt64?, decidesInApp: Bool = true) {
        self.imagePath = imagePath
        self.imageBase = imageBase
        self.fileAddress = fileAddress
        self.decidesInApp = decidesInApp
    }
}

extension CapturedException.StackFrame {
    /// Whether it is the app's code, nil when the symbolicator that answered did not say
    /// (``FrameLookup/decidesInApp``); setting nil keeps ``inApp`` false and says it was not decided.
    public var inAppAnswer: Bool? {
        get { lookup?.decidesInApp == false ? nil : inApp }
        set {
            inApp = newValue ?? false
            if lookup != nil || newValue == nil {
                var answered = lookup ?? FrameLookup(imagePath: nil, imageBase: nil, fileAddress: nil)
                answered.decidesInApp = newValue != nil
                lookup = answered
            }
        }
    }
}
