import Cohorly
import Foundation

/// The rules of PostHog error tracking (`cymbal`; docs/crash-reporting.md "The `$exception` event") and of our own
/// shape, checked on
/// an `$exception` event's properties. Returns every violation (empty: the event passes).
enum EventSchema {
    static let maxBytes = 900_000
    static let mechanisms: Set = ["signal", "cxx_exception", "swift_fatal", "hang"]
    static let languages: Set = ["swift", "c", "cpp"]

    /// `level`, `handled` and `mechanisms` default to a crash's; a live event (a handled error, a hang) passes
    /// its own.
    static func violations(
        _ properties: Properties, level: String = "fatal", handled: Bool = false, synthetic: Bool = false,
        mechanisms: Set<String> = mechanisms
    ) -> [String] {
        var problems: [String] = []
        func require(_ condition: Bool, _ problem: @autoclosure () -> String) {
            if !condition { problems.append(problem()) }
        }
        let json = CohorlyValue.object(["event": "$exception", "properties": .object(properties)]).jsonString
        require(json.utf8.count <= maxBytes, "event is \(json.utf8.count) bytes")
        require(properties["$exception_level"] == .string(level), "$exception_level is not \(level)")
        require(properties["time"]?.intValue != nil, "time missing")
        require(isNonEmptyString(properties["$insert_id"]), "$insert_id missing")
        if let issue = properties["$issue_name"] {
            require((issue.stringValue?.count ?? 256) <= 255, "$issue_name not a string of at most 255")
        }
        guard let list = properties["$exception_list"]?.arrayValue, let exception = list.first else {
            return problems + ["$exception_list missing or empty"]
        }
        require(isNonEmptyString(exception["type"]), "type missing")
        require((exception["type"]?.stringValue?.count ?? 0) <= 255, "type over 255 characters")
        require(exception["value"]?.stringValue != nil, "value missing")
        require(properties["$exception_type"] == exception["type"], "$exception_type differs from type")
        require(properties["$exception_message"] == exception["value"], "$exception_message differs from value")
        let mechanism = exception["mechanism"]
        require(mechanism?["handled"] == .bool(handled), "mechanism.handled is not \(handled)")
        require(mechanism?["synthetic"] == .bool(synthetic), "mechanism.synthetic is not \(synthetic)")
        require(
            mechanisms.contains(mechanism?["type"]?.stringValue ?? ""),
            "mechanism.type \(String(describing: mechanism?["type"]))")
        require(isInt32(exception["thread_id"]), "thread_id not a 32-bit integer")
        var referenced = Set<String>()
        problems += stacktrace(exception["stacktrace"], label: "crashed thread", referenced: &referenced)
        require(!(exception["stacktrace"]?["frames"]?.arrayValue ?? []).isEmpty, "crashed thread has no frames")
        for (index, thread) in (properties["$exception_threads"]?.arrayValue ?? []).enumerated() {
            require(isInt32(thread["thread_id"]), "thread \(index): thread_id")
            problems += stacktrace(thread["stacktrace"], label: "thread \(index)", referenced: &referenced)
        }
        guard let images = properties["$debug_images"]?.arrayValue else { return problems + ["$debug_images missing"] }
        for (index, image) in images.enumerated() {
            let label = "debug image \(index)"
            require(image["type"] == "elf", "\(label): type")
            require(isGUID(image["debug_id"]), "\(label): debug_id \(String(describing: image["debug_id"]))")
            require(isHex(image["image_addr"]), "\(label): image_addr")
            require(isHexDigits(image["code_id"]), "\(label): code_id")
            require((image["image_size"]?.intValue ?? 0) > 0, "\(label): image_size")
            require(isNonEmptyString(image["code_file"]), "\(label): code_file")
            require(isNonEmptyString(image["arch"]), "\(label): arch")
            if let base = image["image_addr"]?.stringValue {
                require(referenced.contains(base), "\(label) is referenced by no frame")
            }
        }
        return problems
    }

    /// Frame rules: `platform: native` on every frame, hex addresses, a module basename, `in_app`, optional
    /// symbol fields of the right types, inline frames right after a frame of the same address.
    static func stacktrace(_ value: CohorlyValue?, label: String, referenced: inout Set<String>) -> [String] {
        guard let value, let frames = value["frames"]?.arrayValue else {
            return ["\(label): stacktrace.frames missing"]
        }
        var problems: [String] = []
        func require(_ condition: Bool, _ problem: @autoclosure () -> String) {
            if !condition { problems.append(problem()) }
        }
        require(value["type"] == "raw" || value["type"] == "resolved", "\(label): stacktrace.type")
        var previousAddress: CohorlyValue?
        for (index, frame) in frames.enumerated() {
            let at = "\(label) frame \(index)"
            guard frame.objectValue != nil else {
                problems.append("\(at): not an object")
                continue
            }
            require(frame["platform"] == "native", "\(at): platform")
            require(isHex(frame["instruction_addr"]), "\(at): instruction_addr")
            require(frame["in_app"]?.isBool == true, "\(at): in_app")
            if let image = frame["image_addr"] {
                require(isHex(image), "\(at): image_addr")
                if let base = image.stringValue { referenced.insert(base) }
                require(isNonEmptyString(frame["module"]), "\(at): module missing")
            }
            if let module = frame["module"] {
                require(module.stringValue.map { !$0.contains("/") } ?? false, "\(at): module \(module) is a path")
            }
            if let lang = frame["lang"] { require(languages.contains(lang.stringValue ?? ""), "\(at): lang \(lang)") }
            for key in ["function", "filename"] where frame[key] != nil {
                require(isNonEmptyString(frame[key]), "\(at): \(key)")
            }
            for key in ["lineno", "colno"] where frame[key] != nil {
                require((frame[key]?.intValue ?? 0) > 0, "\(at): \(key)")
            }
            for key in ["client_resolved", "inline"] where frame[key] != nil {
                require(frame[key]?.isBool == true, "\(at): \(key)")
            }
            if frame["inline"] == true {
                require(previousAddress == frame["instruction_addr"], "\(at): inline frame after another address")
            }
            if frame["function"] != nil { require(frame["client_resolved"] == true, "\(at): client_resolved") }
            previousAddress = frame["instruction_addr"]
        }
        return problems
    }

    static func isNonEmptyString(_ value: CohorlyValue?) -> Bool { !(value?.stringValue ?? "").isEmpty }

    static func isInt32(_ value: CohorlyValue?) -> Bool {
        guard let number = value?.intValue else { return false }
        return Int32(exactly: number) != nil
    }

    static func isHexDigits(_ value: CohorlyValue?) -> Bool {
        guard let text = value?.stringValue, !text.isEmpty else { return false }
        return text.allSatisfy(\.isHexDigit)
    }

    static func isHex(_ value: CohorlyValue?) -> Bool {
        guard let text = value?.stringValue, text.hasPrefix("0x") else { return false }
        return isHexDigits(.string(String(text.dropFirst(2))))
    }

    static func isGUID(_ value: CohorlyValue?) -> Bool {
        guard let text = value?.stringValue else { return false }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map(\.count)
        return parts == [8, 4, 4, 4, 12] && text.replacingOccurrences(of: "-", with: "").allSatisfy(\.isHexDigit)
    }
}

extension CohorlyValue {
    var isBool: Bool {
        if case .bool = self { return true }
        return false
    }
}
