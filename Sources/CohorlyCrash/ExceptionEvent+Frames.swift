import Cohorly
import CohorlySymbols

extension ExceptionEvent {
    /// Turns a captured exception's threads into native frames and its images into debug images.
    struct FrameLayout {
        /// The images the frames point into.
        let images: [CapturedException.Image]
        /// The `arch` of the debug images (nil: the architecture this SDK was compiled for).
        let arch: String?
        /// Sorted (base, image index) for the address → image lookup.
        private let sortedBases: [(base: UInt64, index: Int)]

        init(images: [CapturedException.Image], arch: String?) {
            self.images = images
            self.arch = arch
            sortedBases = images.enumerated().map { ($0.element.base, $0.offset) }.sorted { $0.base < $1.base }
        }

        /// The index in ``images`` of the image holding `address`.
        func imageIndex(containing address: UInt64) -> Int? {
            var low = 0
            var high = sortedBases.count
            while low < high {
                let middle = (low + high) / 2
                if sortedBases[middle].base <= address { low = middle + 1 } else { high = middle }
            }
            guard low > 0 else { return nil }
            let index = sortedBases[low - 1].index
            let image = images[index]
            return address - image.base < image.size ? index : nil
        }

        /// The thread's frames, oldest first (the crash site last), one group per frame of its caller chain
        /// (physical frames down to the anchor, the async callers, the executor's frames below): the frame, then
        /// its inlined calls from the outermost inward (`inline: true`).
        func frames(of thread: CapturedException.Thread) -> [[ExceptionRecord.Frame]] {
            thread.logicalFrames.reversed().map { stackFrame in
                let image = imageIndex(containing: stackFrame.frame.address.value)
                guard let physical = stackFrame.symbols.last else { return [frame(stackFrame, image, nil)] }
                return [frame(stackFrame, image, physical)]
                    + stackFrame.symbols.dropLast().reversed().map { frame(stackFrame, image, $0, inline: true) }
            }
        }

        private func frame(
            _ stackFrame: CapturedException.StackFrame, _ image: Int?, _ symbol: FrameSymbol?, inline: Bool = false
        ) -> ExceptionRecord.Frame {
            var frame = ExceptionRecord.Frame(
                instructionAddress: stackFrame.frame.address.description, inApp: stackFrame.inApp, inlined: inline,
                kind: inline ? nil : stackFrame.frame.kind.wireName)
            if let image {
                frame.imageAddress = Address(images[image].base).description
                frame.imagePath = images[image].path
            }
            if let symbol, symbol.function != nil || symbol.sourceLocation != nil {
                frame.function = symbol.function
                // The mangled name only for Swift: a reader makes either naming style from it (a C or C++ name
                // reads the same in both).
                if let raw = symbol.rawFunction, Demangler.isSwiftMangled(raw) { frame.symbol = raw }
                // A file only where the line table places the address (not a compile unit's or an STT_FILE
                // symbol's name with line 0: `crtstuff.c`, `Swift.o`).
                if symbol.sourceLocation != nil {
                    frame.filename = symbol.file
                    frame.line = max(0, symbol.line)
                    frame.column = max(0, symbol.column)
                }
                frame.language = Self.language(of: symbol)
                frame.resolved = true
            }
            return frame
        }

        /// `swift`, `cpp` or `c`, from the mangling of the name or the source file's extension; nil if unsure.
        static func language(of symbol: FrameSymbol) -> String? {
            let raw = symbol.rawFunction ?? ""
            if raw.hasPrefix("$s") || raw.hasPrefix("_$s") || raw.hasPrefix("$S") || raw.hasPrefix("_T0") {
                return "swift"
            }
            if raw.hasPrefix("_Z") { return "cpp" }
            if CrashReason.runtimeFailure(symbol.function) != nil { return "swift" }
            guard symbol.sourceLocation != nil, let file = symbol.file, let dot = file.lastIndex(of: ".") else {
                return nil
            }
            switch file[file.index(after: dot)...] {
            case "swift": return "swift"
            case "cpp", "cc", "cxx", "hpp", "hh", "hxx": return "cpp"
            case "c": return "c"
            default: return nil
            }
        }

        /// `$debug_images`: the images that `frames` reference, in the images' order. An image without a build
        /// id is left out (PostHog rejects an event with an image lacking a `debug_id`); its frames keep their
        /// module and address.
        func debugImages(referencedBy frames: [ExceptionRecord.Frame]) -> [ExceptionRecord.Image] {
            let referenced = Set(frames.compactMap(\.imageAddress))
            let arch = self.arch ?? Self.compiledArch
            return images.filter {
                referenced.contains(Address($0.base).description)
                    && !ExceptionEvent.debugId(fromBuildId: $0.buildId).isEmpty
            }.map { image in
                ExceptionRecord.Image(
                    codeFile: image.path, codeId: image.buildId,
                    debugId: ExceptionEvent.debugId(fromBuildId: image.buildId),
                    imageAddress: Address(image.base).description, imageSize: Int(clamping: image.size), arch: arch)
            }
        }

        #if arch(x86_64)
            static let compiledArch = "x86_64"
        #elseif arch(arm64)
            static let compiledArch = "aarch64"
        #else
            static let compiledArch = "unknown"
        #endif
    }
}
