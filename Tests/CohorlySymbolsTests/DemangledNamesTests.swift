import Testing

@testable import CohorlySymbols

#if canImport(Glibc)
    import Glibc
#endif

/// `DemangledNames` writes readable names straight into its blocks: each equals the runtime's own result (a
/// malloc'd copy), across block ends, for a name longer than the room offered (made again in a block of its
/// size), and for C++ and plain names.
@Suite struct DemangledNamesTests {
    /// The readable name as `Demangler.readableCopy` (malloc'd, the runtime's plain result) makes it.
    static func reference(_ name: String) -> String? {
        name.withCString { mangled in
            Demangler.readableCopy(mangled).map { made in
                defer { free(made) }
                return String(cString: made)
            }
        }
    }

    static func made(_ names: DemangledNames, _ name: String) -> String? {
        name.withCString { names.demangle($0) }.map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func namesAcrossBlocksEqualTheRuntimesOwn() {
        let names = DemangledNames()
        // 3,000 names of ~60-90 bytes readable: several 64 KiB blocks.
        var made: [(String, UnsafeBufferPointer<UInt8>)] = []
        for index in 0..<3000 {
            let identifier = "function\(index)WithALongerName"
            let mangled = "$s4main\(identifier.utf8.count)\(identifier)yySiF"
            guard let bytes = mangled.withCString({ names.demangle($0) }) else {
                Issue.record("\(mangled) not demangled")
                return
            }
            made.append((mangled, bytes))
        }
        // Earlier names stay where they were written while later blocks are added.
        for (mangled, bytes) in made {
            #expect(String(decoding: bytes, as: UTF8.self) == Self.reference(mangled))
        }
        #expect(names.size == made.reduce(0) { $0 + $1.1.count })
        names.removeAll()
        #expect(names.size == 0)
    }

    @Test func aNameLongerThanTheRoomOfferedIsMadeWhole() throws {
        let names = DemangledNames()
        let identifier = String(repeating: "x", count: 70_000)  // readable: longer than a whole block
        let mangled = "$s4main\(identifier.utf8.count)\(identifier)yyF"
        let expected = try #require(Self.reference(mangled))
        #expect(expected.utf8.count > 70_000)
        #expect(Self.made(names, "$s4main1fyyF") == Self.reference("$s4main1fyyF"))  // part of a block used
        #expect(Self.made(names, mangled) == expected)
        #expect(Self.made(names, "$s4main1gyyF") == Self.reference("$s4main1gyyF"))
    }

    @Test func cxxAndPlainNames() {
        let names = DemangledNames()
        #expect(Self.made(names, "_ZN3foo3barEi") == "foo::bar(int)")
        #expect(Self.made(names, "main") == nil)
        #expect(Self.made(names, "$sNotAName") == Self.reference("$sNotAName"))  // the runtime gives it back
        #expect(Self.made(names, "_Znotvalid") == nil)
    }
}
