import Cohorly
import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore
@testable import CohorlySymbols

/// A stack on the web page reads the frames' in-app answer (the event's `in_app`): in-app frames highlighted, a
/// server framework's run of frames that are not in-app folded, never the frame where the thread stopped.
@Suite struct WebStackTests {
    static func frame(_ index: Int, _ function: String, inApp: Bool?) -> CapturedException.StackFrame {
        var frame = CapturedException.StackFrame(
            Frame(UInt64(0x1000 + index * 16), kind: index == 0 ? .pc : .returnAddress),
            symbols: [FrameSymbol(function: function, file: nil, line: 0, column: 0, inlined: false)])
        frame.lookup = FrameLookup(imagePath: "/srv/Server", imageBase: 0x1000, fileAddress: nil)
        frame.inAppAnswer = inApp
        return frame
    }

    @Test func frameworkRunsAreFoldedAndAppFramesHighlighted() {
        let frames = [
            Self.frame(0, "Swift._assertionFailure", inApp: false),
            Self.frame(1, "Shop.price(of:)", inApp: true),
            Self.frame(2, "partial apply for closure #1", inApp: false),
            Self.frame(3, "Framework.Router.run()", inApp: false),
            Self.frame(4, "Framework.Router.dispatch()", inApp: false),
            Self.frame(5, "Shop.main()", inApp: true),
            Self.frame(6, "_start", inApp: false),
        ]
        let thread = CapturedException.Thread(tid: 1, name: nil, crashed: true, truncated: false, frames: frames)
        let html = WebStack.frames(thread, executable: "/srv/Server").markup
        // The executable holds every frame; only the in-app ones are highlighted.
        #expect(html.components(separatedBy: "<li class=\"app\">").count - 1 == 2, "\(html)")
        #expect(html.contains("<details><summary>3 frames not in the app</summary>"), "\(html)")
        // The innermost frame and a lone frame after the app's are not folded.
        let folded =
            html.components(separatedBy: "<details>").dropFirst().first?
            .components(separatedBy: "</details>").first ?? ""
        #expect(!folded.contains("_assertionFailure") && !folded.contains("_start"), "\(html)")
        #expect(folded.contains("Framework.Router.dispatch()"), "\(html)")
        // Without an answer (an older symbolicator): the executable's frames, nothing folded.
        let unknown = frames.enumerated().map { Self.frame($0, $1.symbols[0].function ?? "", inApp: nil) }
        let plain = WebStack.frames(
            CapturedException.Thread(tid: 1, name: nil, crashed: true, truncated: false, frames: unknown),
            executable: "/srv/Server"
        ).markup
        #expect(plain.components(separatedBy: "<li class=\"app\">").count - 1 == 7, "\(plain)")
        #expect(!plain.contains("<details>"), "\(plain)")
    }
}
