import Foundation
import Testing

@testable import CohorlySymbols

/// The batch path of `symbolicate --exe` (addresses looked up in address order, names demangled together on
/// every core) gives the same frames, in the order asked, as looking each address up alone.
@Suite struct BatchLookupTests {
    @Test(arguments: ["inline_c", "templates", "shop_release", "shop_release.stripped"])
    func batchEqualsOneByOne(_ name: String) throws {
        let fixtures = try Fixtures.get()
        let path = fixtures.path(name)
        let unstripped = path.hasSuffix(".stripped") ? String(path.dropLast(".stripped".count)) : path
        let functions = try Reference.functions(unstripped)
        var generator = SeededGenerator(state: 0xBA7C4)
        var addresses = functions.map(\.start)
        for _ in 0..<300 {
            guard let function = functions.randomElement(using: &generator), function.size > 0 else { continue }
            addresses.append(function.start + UInt64.random(in: 0..<function.size, using: &generator))
        }
        // Repeats, addresses outside every function, and no order at all.
        addresses += addresses.prefix(40) + [0, 1, UInt64.max, UInt64.max - 1]
        addresses.shuffle(using: &generator)

        let batchSymbolicator = try ModuleSymbolicator.open(
            codeFile: path, buildId: nil, locator: DebugFileLocator(debuginfod: nil))
        let batch = batchSymbolicator.records(for: addresses)
        #expect(batch.groupOfAddress.count == addresses.count)
        #expect(batch.groups.map(\.address) == Array(Set(addresses)).sorted())
        let single = try ModuleSymbolicator.open(
            codeFile: path, buildId: nil, locator: DebugFileLocator(debuginfod: nil))
        var differences: [String] = []
        for (index, address) in addresses.enumerated() {
            let bounds = batch.frames(of: index)
            let batched = batch.records[bounds].map(batchSymbolicator.frame)
            let alone = single.symbolicate(address).frames
            if batched != alone { differences.append("0x\(String(address, radix: 16)): \(batched) vs \(alone)") }
        }
        #expect(differences.isEmpty, "\(differences.count) differ, e.g. \(differences.prefix(2))")
        // The comparison is not vacuous: most addresses have frames, some have several.
        let all = addresses.indices.map(batch.frames(of:))
        #expect(all.filter { !$0.isEmpty }.count > addresses.count / 2)
        #expect(all.contains { $0.count > 1 } || name == "templates")
    }

    @Test func deferredDemanglingOnSeveralThreadsEqualsDemanglingEachName() throws {
        // Enough names for the threaded path (it starts at 256), Swift and C++ and not mangled at all.
        var names: [UnsafeMutablePointer<CChar>] = []
        defer { names.forEach { free($0) } }
        for index in 0..<1200 {
            let name: String
            switch index % 3 {
            case 0:
                let type = "Outer\(index)"
                name = "_ZN2ns\(type.utf8.count)\(type)IiE3runEv"
            case 1:
                let type = "Thing\(index)"
                name = "$s4main\(type.utf8.count)\(type)V3runyS2iF"
            default: name = "plain_c_function_\(index)"
            }
            names.append(strdup(name))
        }
        let text = TextTable()
        text.defersDemangling = true
        let numbers = names.map { text.add(demangling: $0) }
        text.demanglePending()
        text.defersDemangling = false
        for (number, name) in zip(numbers, names) {
            let expected = Demangler.demangle(String(cString: name))
            #expect(text.string(number) == expected)
        }
        #expect(text.string(numbers[0]) == "ns::Outer0<int>::run()")
        #expect(text.string(numbers[2]) == "plain_c_function_2")
        #expect(text.string(numbers[1])?.contains("Thing1") == true)
        #expect(text.string(numbers[1]) == "main.Thing1.run(Swift.Int) -> Swift.Int")
    }

    /// After a batch is closed, its names are read through the view while still in the making (made on the
    /// reading thread unless the background thread has them, then waited for), in any order; they equal
    /// demangling each name, and so do the entries once the batch is finished.
    @Test func namesOfAClosedBatchAreMadeAsTheViewReadsThem() throws {
        var names: [UnsafeMutablePointer<CChar>] = []
        defer { names.forEach { free($0) } }
        for index in 0..<1000 {
            let type = "Thing\(index)"
            names.append(strdup(index % 7 == 0 ? "plain_\(index)" : "$s4main\(type.utf8.count)\(type)V3runyS2iF"))
        }
        let text = TextTable()
        text.defersDemangling = true
        let numbers = names.map { text.add(demangling: $0) }
        text.closeBatch()
        text.defersDemangling = false
        let expected = names.map { Demangler.demangle(String(cString: $0)) }
        text.withView { view in
            for position in numbers.indices.reversed() {  // the background thread takes them from the first
                #expect(String(decoding: view[numbers[position]], as: UTF8.self) == expected[position])
            }
        }
        text.demanglePending()
        for (number, name) in zip(numbers, expected) { #expect(text.string(number) == name) }
        // A name added after the batch is made at once and does not disturb the closed batch's.
        let late = strdup("$s4main4LateV3runyS2iF")
        defer { free(late) }
        let lateNumber = try #require(late.map { text.add(demangling: $0) })
        #expect(text.string(lateNumber) == "main.Late.run(Swift.Int) -> Swift.Int")
    }

    /// A batch closed while the one before is still in the making: the view finds each name of both.
    @Test func twoClosedBatchesAreReadTogether() {
        var names: [UnsafeMutablePointer<CChar>] = []
        defer { names.forEach { free($0) } }
        for index in 0..<300 {
            let type = "Batch\(index)"
            names.append(strdup("$s4main\(type.utf8.count)\(type)V3runyS2iF"))
        }
        let text = TextTable()
        text.defersDemangling = true
        let first = names[..<130].map { text.add(demangling: $0) }
        text.closeBatch()
        let second = names[130...].map { text.add(demangling: $0) }
        text.closeBatch()
        text.defersDemangling = false
        text.withView { view in
            for (number, name) in zip(first + second, names) {
                #expect(String(decoding: view[number], as: UTF8.self) == Demangler.demangle(String(cString: name)))
            }
        }
    }

    @Test func radixOrderIsTheStableAscendingOrder() {
        var generator = SeededGenerator(state: 42)
        for count in [0, 1, 2, 17, 1000, 5000] {
            var addresses: [UInt64] = (0..<count).map { _ in
                switch UInt64.random(in: 0..<4, using: &generator) {
                case 0: return UInt64.random(in: 0..<64, using: &generator)  // many repeats
                case 1: return UInt64.random(in: 0..<(1 << 24), using: &generator)
                case 2: return UInt64.random(in: UInt64.max - 1000...UInt64.max, using: &generator)
                default: return UInt64.random(in: 0...UInt64.max, using: &generator)
                }
            }
            if count > 3 { addresses[3] = 0 }
            let expected = addresses.indices.sorted { (addresses[$0], $0) < (addresses[$1], $1) }
            #expect(ModuleSymbolicator.ascendingOrder(addresses).map(Int.init) == expected)
        }
    }
}
