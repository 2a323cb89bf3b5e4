import CDwarf

/// The code scopes of one compile unit: every concrete `DW_TAG_subprogram` and `DW_TAG_inlined_subroutine`
/// with addresses, found by walking the whole DIE tree (into Swift's `DW_TAG_module`, namespaces, structs,
/// classes, enums and lexical blocks), so the inline chain of any address is a walk down from its function.
///
/// elfutils' own `dwarf_getscopes` prunes PC-less parents such as Swift's module DIE and so never finds
/// Swift inlines; this walk does not prune. Names and call-site files are resolved only when looked up.
final class UnitIndex {
    struct Scope {
        /// DIE offset in `.debug_info`, for the name (resolved lazily).
        var dieOffset: UInt64
        /// Index of the enclosing scope (-1 for a physical function).
        var parent: Int32
        var firstChild: Int32 = -1
        var nextSibling: Int32 = -1
        /// `[rangeStart, rangeStart + rangeCount)` in `ranges`.
        var rangeStart: Int32
        var rangeCount: Int32
        var callFile: UInt32 = 0
        var callLine: UInt32 = 0
        var callColumn: UInt32 = 0
    }

    struct Range {
        var low: UInt64
        var high: UInt64
        var scope: Int32
    }

    private(set) var scopes: [Scope] = []
    private(set) var ranges: [Range] = []
    /// Ranges of physical functions, sorted by `low`; `maxHigh[i]` is the largest `high` in `roots[0...i]`.
    private(set) var roots: [Range] = []
    private var maxHigh: [UInt64] = []
    /// Whether the linear pass read the whole unit (false: libdw's walk was used).
    private(set) var usedLinearWalk = false

    /// Indexes the unit: in one linear pass with `scanner` when it can read every DIE, else with libdw's
    /// child/sibling walk.
    init(unitDie: Dwarf_Die, scanner: DieScanner? = nil) {
        var die = unitDie
        var linear = false
        if let scanner, dwarf_tag(&die) > 0 {
            if dwarf_haschildren(&die) <= 0 {
                linear = true  // nothing below the unit DIE
            } else if let firstChild = scanner.attributesEnd(&die) {
                linear = walkList(at: firstChild, parent: -1, cu: die.cu, scanner: scanner) != nil
                if !linear {
                    scopes.removeAll()
                    ranges.removeAll()
                    roots.removeAll()
                }
            }
        }
        usedLinearWalk = linear
        var child = Dwarf_Die()
        if !linear && dwarf_child(&die, &child) == 0 { walkSiblings(child, parent: -1) }
        roots.sort { $0.low < $1.low }
        var running: UInt64 = 0
        maxHigh = roots.map {
            running = max(running, $0.high)
            return running
        }
    }

    /// Reads the children list starting at `start` (each DIE, then its own children list, in file order) and
    /// returns the byte after the list's terminating 0, or nil when a DIE could not be read.
    private func walkList(
        at start: UnsafePointer<UInt8>, parent: Int32, cu: OpaquePointer?, scanner: DieScanner
    ) -> UnsafePointer<UInt8>? {
        var position = start
        while position < scanner.end {
            if position.pointee == 0 { return position + 1 }
            var die = Dwarf_Die()
            die.addr = UnsafeMutableRawPointer(mutating: position)
            die.cu = cu
            let childParent = record(&die, parent: parent)
            guard childParent != Int32.min, let attributesEnd = scanner.attributesEnd(&die) else {
                return nil
            }
            if dwarf_haschildren(&die) > 0 {
                guard let after = walkList(at: attributesEnd, parent: childParent, cu: cu, scanner: scanner)
                else {
                    return nil
                }
                position = after
            } else {
                position = attributesEnd
            }
        }
        return nil
    }

    private func walkSiblings(_ first: Dwarf_Die, parent: Int32) {
        var die = first
        while true {
            visit(&die, parent: parent)
            var next = Dwarf_Die()
            guard dwarf_siblingof(&die, &next) == 0 else { return }
            die = next
        }
    }

    private func visit(_ die: inout Dwarf_Die, parent: Int32) {
        let childParent = record(&die, parent: parent)
        guard childParent != Int32.min, dwarf_haschildren(&die) > 0 else { return }
        var child = Dwarf_Die()
        if dwarf_child(&die, &child) == 0 { walkSiblings(child, parent: childParent) }
    }

    /// Records the DIE when it is a function or an inlined call with addresses; returns the scope its children
    /// belong to (`Int32.min` when the DIE cannot be read).
    private func record(_ die: inout Dwarf_Die, parent: Int32) -> Int32 {
        let tag = dwarf_tag(&die)
        var childParent = parent
        if tag == Int32(DW_TAG_subprogram) || tag == Int32(DW_TAG_inlined_subroutine) {
            let isInlined = tag == Int32(DW_TAG_inlined_subroutine)
            let index = Int32(scopes.count)
            let owner: Int32 = isInlined ? parent : -1
            let first = ranges.count
            DwarfRanges.append(&die, scope: index, to: &ranges)
            if ranges.count > first {
                var scope = Scope(
                    dieOffset: dwarf_dieoffset(&die), parent: owner, rangeStart: Int32(first),
                    rangeCount: Int32(ranges.count - first))
                if isInlined {
                    scope.callFile = UInt32(
                        truncatingIfNeeded: DwarfAttributes.unsigned(&die, UInt32(DW_AT_call_file)))
                    scope.callLine = UInt32(
                        truncatingIfNeeded: DwarfAttributes.unsigned(&die, UInt32(DW_AT_call_line)))
                    scope.callColumn = UInt32(
                        truncatingIfNeeded: DwarfAttributes.unsigned(&die, UInt32(DW_AT_call_column)))
                }
                if owner >= 0 {
                    scope.nextSibling = scopes[Int(owner)].firstChild
                    scopes[Int(owner)].firstChild = index
                }
                scopes.append(scope)
                if owner < 0 { roots.append(contentsOf: ranges[first...]) }
                childParent = index
            } else if !isInlined {
                childParent = -1
            }
        }
        return tag <= 0 ? Int32.min : childParent  // libdw says DW_TAG_invalid (0) for an unreadable DIE
    }

    /// The chain of scopes containing `address`, innermost first (empty when no function covers it).
    func chain(at address: UInt64) -> [Int32] {
        var low = 0
        var high = roots.count
        while low < high {
            let mid = (low + high) / 2
            if roots[mid].low <= address { low = mid + 1 } else { high = mid }
        }
        var index = low - 1
        var root: Int32 = -1
        while index >= 0 && maxHigh[index] > address {
            if roots[index].high > address {
                root = roots[index].scope
                break
            }
            index -= 1
        }
        guard root >= 0 else { return [] }
        var result: [Int32] = []
        result.reserveCapacity(8)
        result.append(root)
        var current = root
        descend: while true {
            var child = scopes[Int(current)].firstChild
            while child >= 0 {
                if contains(child, address) {
                    result.append(child)
                    current = child
                    continue descend
                }
                child = scopes[Int(child)].nextSibling
            }
            break
        }
        return result.reversed()
    }

    private func contains(_ scope: Int32, _ address: UInt64) -> Bool {
        let entry = scopes[Int(scope)]
        for index in Int(entry.rangeStart)..<Int(entry.rangeStart + entry.rangeCount) {
            let range = ranges[index]
            if range.low <= address && address < range.high { return true }
        }
        return false
    }

    /// Ranges covered by physical functions (for units without their own range attributes).
    var functionRanges: [(low: UInt64, high: UInt64)] { roots.map { ($0.low, $0.high) } }
}

/// `DW_AT_low_pc`/`DW_AT_high_pc`/`DW_AT_ranges` of a DIE, without empty ranges and linker tombstones
/// (address 0 or ≥ -2 for code that was discarded).
enum DwarfRanges {
    /// Appends the DIE's ranges, tagged with `scope`, to `ranges` (no temporary array per DIE).
    static func append(_ die: inout Dwarf_Die, scope: Int32, to ranges: inout [UnitIndex.Range]) {
        var base: Dwarf_Addr = 0
        var start: Dwarf_Addr = 0
        var end: Dwarf_Addr = 0
        var offset = dwarf_ranges(&die, 0, &base, &start, &end)
        while offset > 0 {
            if end > start && start != 0 && start < UInt64.max - 1 {
                ranges.append(UnitIndex.Range(low: start, high: end, scope: scope))
            }
            offset = dwarf_ranges(&die, offset, &base, &start, &end)
        }
    }

    static func of(_ die: inout Dwarf_Die) -> [(low: UInt64, high: UInt64)] {
        var result: [(low: UInt64, high: UInt64)] = []
        var base: Dwarf_Addr = 0
        var start: Dwarf_Addr = 0
        var end: Dwarf_Addr = 0
        var offset = dwarf_ranges(&die, 0, &base, &start, &end)
        while offset > 0 {
            if end > start && start != 0 && start < UInt64.max - 1 { result.append((start, end)) }
            offset = dwarf_ranges(&die, offset, &base, &start, &end)
        }
        return result
    }
}

/// Attribute helpers.
enum DwarfAttributes {
    static func unsigned(_ die: inout Dwarf_Die, _ name: UInt32) -> UInt64 {
        var attribute = Dwarf_Attribute()
        guard dwarf_attr(&die, name, &attribute) != nil else { return 0 }
        var value: Dwarf_Word = 0
        return dwarf_formudata(&attribute, &value) == 0 ? value : 0
    }

    /// The linkage name (following `DW_AT_abstract_origin` and `DW_AT_specification`), else the plain name.
    static func functionName(_ die: inout Dwarf_Die) -> String? {
        for name in [DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name] {
            var attribute = Dwarf_Attribute()
            if dwarf_attr_integrate(&die, UInt32(name), &attribute) != nil,
                let text = dwarf_formstring(&attribute)
            {
                return String(cString: text)
            }
        }
        return nil
    }
}
