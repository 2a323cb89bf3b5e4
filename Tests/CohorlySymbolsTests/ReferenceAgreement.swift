import CohorlySymbols

/// Our frames for addresses compared with the oracle's (``Reference``), the known differences
/// (``ModuleSymbolicatorTests/tolerated(_:_:)``) allowed: the comparison every agreement test makes.
struct ReferenceAgreement {
    /// One line per address whose frames differ: `0xADDR: ours … llvm …`.
    var mismatches: [String] = []
    /// How many of the references are inline chains (more than one frame).
    var inlined = 0
    /// How many addresses were compared.
    var compared = 0

    /// Compares `symbolicator`'s frames for each of `addresses` with `references` (one per address, in order).
    init(_ symbolicator: ModuleSymbolicator, _ addresses: [UInt64], _ references: [[Reference.Frame]]) {
        compared = addresses.count
        for (address, reference) in zip(addresses, references) {
            let ours = Reference.frames(symbolicator, address)
            if reference.count > 1 { inlined += 1 }
            if ours != reference && !ModuleSymbolicatorTests.tolerated(ours, reference) {
                mismatches.append("0x\(String(address, radix: 16)): ours \(ours) llvm \(reference)")
            }
        }
    }

    /// `N of M differ: ` and the first four mismatches.
    var summary: String {
        "\(mismatches.count) of \(compared) differ: " + mismatches.prefix(4).joined(separator: "; ")
    }
}

extension Reference {
    /// `symbolicator`'s frames for `address` in the oracle's terms (raw function names).
    static func frames(_ symbolicator: ModuleSymbolicator, _ address: UInt64) -> [Frame] {
        symbolicator.symbolicate(address).frames.map {
            Frame(function: $0.rawFunction ?? "", file: $0.file ?? "", line: $0.line, column: $0.column)
        }
    }
}
