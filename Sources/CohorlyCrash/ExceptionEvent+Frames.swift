import Cohorly
import CohorlySymbols

extension ExceptionEvent {
    /// Turns threads into native frames and modules into debug images: a crash report's, or a live
    /// capture's (``LiveException``).
    struct FrameLayout {
        /// The modules the frames point into.
        let modules: [CrashReport.Module]
        /// The `arch` of the debug images (nil: the architecture this SDK was compiled for).
        let arch: String?
        /// Per module: whether it is the app's.
        let inApp: [Bool]
        /// Sorted (base, module index) for the address → module lookup.
        private let sortedBases: [(base: UInt64, index: Int)]

        init(report: CrashReport, rules: InAppRules) {
            self.init(
                modules: report.modules, executable: report.executable, arch: report.context["$arch"]?.stringValue,
                rules: rules)
        }

        init(modules: [CrashReport.Module], executable: String, arch: String?, rules: InAppRules) {
            self.modules = modules
            self.arch = arch
            inApp = modules.map { rules.isInApp(path: $0.path, executable: executable) }
            sortedBases = modules.enumerated().map { ($0.element.base.value, $0.offset) }.sorted {
                $0.base < $1.base
            }
        }

        /// The index in ``modules`` of the module holding `address`.
        func moduleIndex(containing address: Address) -> Int? {
            var low = 0
            var high = sortedBases.count
            while low < high {
                let middle = (low + high) / 2
                if sortedBases[middle].base <= address.value { low = middle + 1 } else { high = middle }
            }
            guard low > 0 else { return nil }
            let index = sortedBases[low - 1].index
            return modules[index].contains(address) ? index : nil
        }

        /// The thread's frames, oldest first (the crash site last), one group per physical frame: the physical
        /// frame, then its inlined calls from the outermost inward (`inlined`). `symbols` are the device's
        /// frames per physical frame, innermost first (nil or empty: raw).
        func frames(of thread: CrashReport.Thread, symbols: [[SymbolicatedFrame]]?) -> [[ExceptionRecord.Frame]] {
            thread.frames.indices.reversed().map { index in
                let address = thread.frames[index]
                let module = moduleIndex(containing: address)
                let found = symbols.flatMap { index < $0.count ? $0[index] : nil } ?? []
                guard let physical = found.last else { return [frame(address, module, nil, inline: false)] }
                return [frame(address, module, physical, inline: false)]
                    + found.dropLast().reversed().map { frame(address, module, $0, inline: true) }
            }
        }

        private func frame(_ address: Address, _ module: Int?, _ symbol: SymbolicatedFrame?, inline: Bool)
            -> ExceptionRecord.Frame
        {
            var frame = ExceptionRecord.Frame(
                instructionAddress: address.description, inApp: module.map { inApp[$0] } ?? false, inlined: inline)
            if let module {
                frame.imageAddress = modules[module].base.description
                frame.imagePath = modules[module].path
            }
            if let symbol, symbol.function != nil || symbol.file != nil {
                frame.function = symbol.function
                frame.filename = symbol.file
                frame.line = max(0, symbol.line)
                frame.column = max(0, symbol.column)
                frame.language = Self.language(of: symbol)
                frame.resolved = true
            }
            return frame
        }

        /// `swift`, `cpp` or `c`, from the mangling of the name or the source file's extension; nil if unsure.
        static func language(of symbol: SymbolicatedFrame) -> String? {
            let raw = symbol.rawFunction ?? ""
            if raw.hasPrefix("$s") || raw.hasPrefix("_$s") || raw.hasPrefix("$S") || raw.hasPrefix("_T0") {
                return "swift"
            }
            if raw.hasPrefix("_Z") { return "cpp" }
            if symbol.swiftRuntimeFailure != nil { return "swift" }
            guard let file = symbol.file, let dot = file.lastIndex(of: ".") else { return nil }
            switch file[file.index(after: dot)...] {
            case "swift": return "swift"
            case "cpp", "cc", "cxx", "hpp", "hh", "hxx": return "cpp"
            case "c": return "c"
            default: return nil
            }
        }

        /// `$debug_images`: the modules that `frames` reference, in the modules' order. A module without a build
        /// id is left out (PostHog rejects an event with an image lacking a `debug_id`); its frames keep their
        /// module and address.
        func debugImages(referencedBy frames: [ExceptionRecord.Frame]) -> [ExceptionRecord.Image] {
            let referenced = Set(frames.compactMap(\.imageAddress))
            let arch = self.arch ?? Self.compiledArch
            return modules.filter {
                referenced.contains($0.base.description) && !ExceptionEvent.debugId(fromBuildId: $0.buildId).isEmpty
            }.map { module in
                ExceptionRecord.Image(
                    codeFile: module.path, codeId: module.buildId,
                    debugId: ExceptionEvent.debugId(fromBuildId: module.buildId),
                    imageAddress: module.base.description, imageSize: Int(clamping: module.size.value), arch: arch)
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
