import CDwarf

/// The code scopes of one compile unit: every concrete `DW_TAG_subprogram` and `DW_TAG_inlined_subroutine`
/// with addresses, found by walking the whole DIE tree (into Swift's `DW_TAG_module`, namespaces, structs,
/// classes, enums and lexical blocks).
///
/// elfutils' own `dwarf_getscopes` prunes PC-less parents such as Swift's module DIE and so never finds
/// Swift inlines; this walk does not prune. Names and call-site files are resolved only when looked up.
///
/// Lookup is two binary searches: the physical function (a "root") containing the address, then, inside that
/// function, a flat map from address to the innermost inlined scope. Reading the unit records its functions and
/// their ranges only, stepping over every other DIE (a whole DIE at once when its abbreviation's values have
/// fixed sizes); a function's inline tree is read the first time an address in it is asked for, and its map
/// built on a later ask, so a batch pays for each function once and a single address pays for one function's
/// tree only.
final class UnitIndex {
    struct Scope {
        /// Offset in `.debug_info` of the DIE the scope's name is read from (resolved lazily): its own, or, when
        /// it names nothing itself, the abstract origin (or specification) libdw would follow — so inlined copies
        /// of one function share one name DIE, and a lookup does not read the scope's own DIE again.
        var dieOffset: UInt64
        /// Index of the enclosing scope (-1 for a physical function).
        var parent: Int32
        /// Its first range in `ranges`; its ranges run up to the next scope's first (scopes and their ranges are
        /// recorded in the same order).
        var rangeStart: Int32
        /// One past the last scope recorded below this one (scopes are in DIE pre-order).
        var subtreeEnd: Int32
        /// The first scope recorded below this one: the next scope, except for a function whose inline tree
        /// was read after the unit (its scopes then follow all the unit's); -1 while that tree is not read yet.
        var firstChild: Int32
        var callFile: UInt32 = 0
        var callLine: UInt32 = 0
        var callColumn: UInt32 = 0
        /// `[mapStart, mapStart + mapCount)` in `mapLows`/`mapOwners`: the flat map of a physical function
        /// with inlined scopes (mapStart -1 - n: not built yet, asked n times).
        var mapStart: Int32 = -1
        var mapCount: Int32 = 0
    }

    /// A range of a scope (`scope` in this unit, or of a unit in a file).
    struct Range {
        var low: UInt64
        var high: UInt64
        var scope: Int32
    }

    /// A range of the scope whose ranges it is among (see `Scope.rangeStart`): 16 bytes, not a `Range`'s 24.
    struct Span {
        var low: UInt64
        var high: UInt64
    }

    // The arrays are read on every lookup: they opt out of dynamic exclusivity checks, which cost more than
    // the binary searches. Safe because an index is used by one thread (its symbolicator is not thread-safe)
    // and no access to them overlaps another: nothing holds one `inout` across a call that reads it.
    @exclusivity(unchecked) private(set) var scopes: [Scope] = []
    @exclusivity(unchecked) private(set) var ranges: [Span] = []
    /// Ranges of physical functions (`scope`: the function), gathered while the unit is read.
    private var rootRanges: [Range] = []
    /// The same, sorted for lookups.
    @exclusivity(unchecked) private(set) var roots = SortedRanges([])
    /// Flat maps of the functions looked up so far: from `mapLows[i]` up to the next entry's low, the innermost
    /// scope is `mapOwners[i]` (-1: none).
    @exclusivity(unchecked) private var mapLows: [UInt64] = []
    @exclusivity(unchecked) private var mapOwners: [Int32] = []
    @exclusivity(unchecked) private var scratchMembers: [Bool] = []
    @exclusivity(unchecked) private var scratchBounds: [UInt64] = []
    @exclusivity(unchecked) private var scratchOwners: [Int32] = []
    /// Whether the linear pass read the whole unit (false: libdw's walk was used).
    private(set) var usedLinearWalk = false
    /// The reader of the unit's DIEs, kept to read functions' inline trees on demand.
    private let scanner: DieScanner?
    private let cu: OpaquePointer?
    /// Per function whose inline tree is not read yet (`firstChild` -1): its DIE and where its children start.
    private var unreadTrees: [Int32: (die: UnsafePointer<UInt8>, children: UnsafePointer<UInt8>)] = [:]
    /// How many functions' inline trees were read after the unit (for tests).
    private(set) var treesRead = 0

    /// What a linear pass over DIEs records: every scope (`whole`); functions only, their inline trees left
    /// for later (`functions`); one function's inline tree, nested functions stepped over (`inlineTree`).
    private enum Pass {
        case whole
        case functions
        case inlineTree
    }

    /// The scope of the DIEs inside a function met while reading another's inline tree (stepped over).
    private static let steppedOver = Int32.min
    /// A DWARF 2-4 unit's `.debug_ranges` as the linear pass reads it itself: the section, the unit's base
    /// address (its `DW_AT_low_pc`, as libdw takes it) and the address size; nil when libdw is asked instead.
    private var rangeLists: (section: DieScanner.Bounds, base: UInt64, addressSize: Int)?

    /// Indexes the unit: in one linear pass with `scanner` when it can read every DIE, else with libdw's
    /// child/sibling walk. With `lazily` (and the scanner), the pass records functions only and each function's
    /// inline tree is read when first asked for; libdw's walk reads them all at once.
    init(unitDie: Dwarf_Die, scanner: DieScanner? = nil, lazily: Bool = true) {
        var die = unitDie
        var linear = false
        self.scanner = scanner
        self.cu = unitDie.cu
        if let scanner, let start = die.addr {
            // Room for what a unit of this size typically holds (a Swift release unit: one scope per ~30 bytes,
            // one range per ~18), so the arrays are not copied over and over while they grow.
            let size = scanner.end - UnsafePointer(start.assumingMemoryBound(to: UInt8.self))
            // (Generous: capacity never written to costs no memory, a copy while growing costs both.)
            scopes.reserveCapacity(min(size / 20, 1 << 20))
            ranges.reserveCapacity(min(size / 16, 1 << 21))
            var base: Dwarf_Addr = 0
            if scanner.version < 5, let section = scanner.rangeListSection, dwarf_lowpc(&die, &base) == 0 {
                rangeLists = (section, base, scanner.addressSize)
            }
            linear = walkUnit(
                at: UnsafePointer(start.assumingMemoryBound(to: UInt8.self)), cu: die.cu, scanner,
                pass: lazily ? .functions : .whole)
            if !linear {
                scopes.removeAll()
                ranges.removeAll()
                rootRanges.removeAll()
                unreadTrees.removeAll()
            }
        }
        usedLinearWalk = linear
        var child = Dwarf_Die()
        if !linear && dwarf_child(&die, &child) == 0 { walkSiblings(child, parent: -1) }
        roots = SortedRanges(rootRanges)
        rootRanges = []
    }

    /// Reads the unit DIE at `start` and everything below it; false when any DIE could not be read.
    private func walkUnit(
        at start: UnsafePointer<UInt8>, cu: OpaquePointer?, _ scanner: DieScanner, pass: Pass
    ) -> Bool {
        guard let (code, afterCode) = DieScanner.readLEB(start, end: scanner.end), code != 0,
            let abbreviation = scanner.abbreviation(code),
            let cursor = scanner.skipAttributes(of: abbreviation, at: afterCode)
        else { return false }
        return !abbreviation.hasChildren
            || walkList(at: cursor, parent: -1, cu: cu, scanner: scanner, pass: pass) != nil
    }

    /// Reads the inline tree of the function `root` when it is not read yet: its scopes are appended after
    /// all others (`firstChild` says where they start). When the linear pass cannot read it, libdw's walk does
    /// (`byLibdw`: at once, for tests — the linear pass fails on a tree only where it failed on the unit's
    /// functions pass, which then gave the whole unit to libdw, so no input reaches this walk otherwise).
    private func readTree(of root: Int32, byLibdw: Bool = false) {
        guard let unread = unreadTrees.removeValue(forKey: root), let scanner else { return }
        let first = scopes.count
        let firstRange = ranges.count
        if byLibdw
            || walkList(at: unread.children, parent: root, cu: cu, scanner: scanner, pass: .inlineTree) == nil
        {
            scopes.removeSubrange(first...)
            ranges.removeSubrange(firstRange...)
            var die = Dwarf_Die()
            die.addr = UnsafeMutableRawPointer(mutating: unread.die)
            die.cu = cu
            var child = Dwarf_Die()
            if dwarf_child(&die, &child) == 0 { walkSiblings(child, parent: root) }
        }
        scopes[Int(root)].firstChild = Int32(first)
        scopes[Int(root)].subtreeEnd = Int32(scopes.count)
        treesRead += 1
    }

    /// Reads every function's inline tree not read yet (for those that need every scope: the symbol cache's
    /// writer, tests); with `byLibdw`, each by libdw's walk (the fallback when the linear pass fails: tests).
    func readAllTrees(byLibdw: Bool = false) {
        for root in unreadTrees.keys.sorted() { readTree(of: root, byLibdw: byLibdw) }
    }

    /// Reads the children list starting at `start` (each DIE, then its own children list, in file order) and
    /// returns the byte after the list's terminating 0, or nil when a DIE could not be read. Iterative, with
    /// the open lists on a heap stack: a file may nest DIEs as deep as it likes without exhausting the thread's
    /// stack.
    private func walkList(
        at start: UnsafePointer<UInt8>, parent: Int32, cu: OpaquePointer?, scanner: DieScanner, pass: Pass
    ) -> UnsafePointer<UInt8>? {
        // The lists being read: the scope each belongs to, and the one its opening DIE's list belongs to.
        var open: [(scope: Int32, outer: Int32)] = []
        var listScope = parent
        var position = start
        while position < scanner.end {
            guard let (code, afterCode) = DieScanner.readLEB(position, end: scanner.end) else { return nil }
            if code == 0 {
                guard let finished = open.popLast() else { return afterCode }
                if pass != .functions { closeSubtree(listScope, parent: finished.outer) }
                listScope = finished.outer
                position = afterCode
                continue
            }
            guard let abbreviation = scanner.abbreviation(code) else { return nil }
            var cursor = afterCode
            var childParent = listScope
            let tag = Int32(bitPattern: abbreviation.tag)
            let isFunction = tag == Int32(DW_TAG_subprogram)
            let isInlined = tag == Int32(DW_TAG_inlined_subroutine)
            var reads: Bool
            switch pass {
            case .whole: reads = isFunction || isInlined
            // An inlined call outside any function is a root of its own (as libdw's walk finds it).
            case .functions: reads = isFunction || (isInlined && listScope < 0)
            case .inlineTree:
                reads = isInlined && listScope != UnitIndex.steppedOver
                // A function inside the tree is a root of its own, its tree read when it is asked for.
                if isFunction || listScope == UnitIndex.steppedOver { childParent = UnitIndex.steppedOver }
            }
            if reads && !abbreviation.hasAddresses {
                // No range (a declaration, an abstract origin): what `add` would answer, without reading it.
                reads = false
                childParent = isInlined ? listScope : -1
            }
            if reads {
                guard let (found, next) = readScope(at: position, attributes: cursor, abbreviation, scanner) else {
                    return nil
                }
                var die = Dwarf_Die()
                die.addr = UnsafeMutableRawPointer(mutating: position)
                die.cu = cu
                childParent = add(
                    &die, offset: UInt64(position - scanner.sectionStart), parent: listScope, isInlined: isInlined,
                    found: found)
                cursor = next
                if pass == .functions && childParent >= 0 && childParent != listScope {
                    if abbreviation.hasChildren {
                        scopes[Int(childParent)].firstChild = -1
                        unreadTrees[childParent] = (position, cursor)
                    }
                }
            } else {
                guard let next = scanner.skipAttributes(of: abbreviation, at: cursor) else { return nil }
                cursor = next
            }
            if abbreviation.hasChildren {
                open.append((childParent, listScope))
                listScope = childParent
            }
            position = cursor
        }
        return nil
    }

    /// What the linear pass read of a function's attributes: its range and call site, or nil (`askLibdw`) when
    /// they take forms it leaves to libdw (`DW_AT_ranges`, indexed addresses, unusual constant forms).
    struct ScopeAttributes {
        var low: UInt64?
        var high: UInt64?
        var highIsOffset = false
        var callFile: UInt64 = 0
        var callLine: UInt64 = 0
        var callColumn: UInt64 = 0
        var askLibdw = false
        /// Where its `DW_AT_ranges` list starts in `.debug_ranges` (DWARF 2-4, read by ``UnitIndex/rangeLists``).
        var rangesOffset: UInt64?
        /// The DIE the scope's name is read from when it names nothing itself: its `DW_AT_abstract_origin`
        /// (else `DW_AT_specification`), when that lies in the unit (nil: its own DIE).
        var nameDie: UInt64?
    }

    /// Decodes the attributes of a subprogram or inlined call starting at `attributes`; returns them and the
    /// byte after them (nil when the DIE cannot be read).
    private func readScope(
        at die: UnsafePointer<UInt8>, attributes: UnsafePointer<UInt8>, _ abbreviation: DieScanner.Abbreviation,
        _ scanner: DieScanner
    ) -> (ScopeAttributes, UnsafePointer<UInt8>)? {
        var found = ScopeAttributes()
        var seen: UInt8 = 0  // the first of duplicate attributes counts, as with libdw's dwarf_attr
        var cursor = attributes
        var hasName = false
        // Whether the DIE has the reference, and the DIE it refers to when this reader can follow it.
        var origin: (present: Bool, target: UnsafePointer<UInt8>?) = (false, nil)
        var specification: (present: Bool, target: UnsafePointer<UInt8>?) = (false, nil)
        for index in Int(abbreviation.first)..<Int(abbreviation.first + abbreviation.count) {
            let spec = scanner.specs[index]
            let bit: UInt8
            switch Int32(bitPattern: spec.name) {
            case Int32(DW_AT_low_pc): bit = 1
            case Int32(DW_AT_high_pc): bit = 2
            case Int32(DW_AT_call_file): bit = 4
            case Int32(DW_AT_call_line): bit = 8
            case Int32(DW_AT_call_column): bit = 16
            case Int32(DW_AT_ranges): bit = 32
            case Int32(DW_AT_abstract_origin): bit = 64
            case Int32(DW_AT_specification): bit = 128
            case Int32(DW_AT_linkage_name), Int32(DW_AT_MIPS_linkage_name), Int32(DW_AT_name):
                hasName = true
                bit = 0
            default: bit = 0
            }
            if bit >= 64 {
                if seen & bit == 0 {
                    seen |= bit
                    let target = scanner.reference(spec.form, at: cursor)
                    if bit == 64 { origin = (true, target) } else { specification = (true, target) }
                }
                guard let next = scanner.skip(form: spec.form, at: cursor) else { return nil }
                cursor = next
                continue
            }
            if bit != 0 && seen & bit == 0 {
                seen |= bit
                let value = scanner.constant(spec, at: cursor)
                if bit == 32 {
                    found.rangesOffset = rangeLists == nil ? nil : scanner.sectionOffset(spec.form, at: cursor)
                    if found.rangesOffset == nil { found.askLibdw = true }
                } else if value == nil || (bit == 1 && spec.form != UInt32(DW_FORM_addr)) {
                    found.askLibdw = true
                }
                switch bit {
                case 1: found.low = value
                case 2:
                    found.high = value
                    found.highIsOffset = spec.form != UInt32(DW_FORM_addr)
                case 4: found.callFile = value ?? 0
                case 8: found.callLine = value ?? 0
                case 16: found.callColumn = value ?? 0
                default: break
                }
            }
            guard let next = scanner.skip(form: spec.form, at: cursor) else { return nil }
            cursor = next
        }
        // libdw's dwarf_attr_integrate follows the abstract origin when there is one, else the specification.
        if !hasName, let target = origin.present ? origin.target : specification.target {
            found.nameDie = UInt64(target - scanner.sectionStart)
        }
        return (found, cursor)
    }

    /// libdw's walk from the unit's first child: each DIE, then its children, then its next sibling.
    /// Iterative like the linear pass (the lists being walked are kept on a heap stack).
    private func walkSiblings(_ first: Dwarf_Die, parent: Int32) {
        // Per list being walked: the DIE to visit next (nil when the list is done), the scope the list belongs
        // to, and the scope of the list that holds its opening DIE (nil for the unit's own list).
        var lists: [(next: Dwarf_Die?, scope: Int32, outer: Int32?)] = [(first, parent, nil)]
        while let top = lists.last {
            guard var die = top.next else {
                lists.removeLast()
                if let outer = top.outer { closeSubtree(top.scope, parent: outer) }
                continue
            }
            var sibling = Dwarf_Die()
            lists[lists.count - 1].next = dwarf_siblingof(&die, &sibling) == 0 ? sibling : nil
            let childParent = record(&die, parent: top.scope)
            var child = Dwarf_Die()
            if childParent != Int32.min, dwarf_haschildren(&die) > 0, dwarf_child(&die, &child) == 0 {
                lists.append((child, childParent, top.scope))
            }
        }
    }

    /// After a DIE's children were walked: when the DIE was recorded as a scope, its subtree ends here.
    private func closeSubtree(_ childParent: Int32, parent: Int32) {
        if childParent >= 0 && childParent != parent {
            scopes[Int(childParent)].subtreeEnd = Int32(scopes.count)
        }
    }

    /// Records the DIE (libdw's walk) when it is a function or an inlined call with addresses; returns the scope
    /// its children belong to (`Int32.min` when the DIE cannot be read).
    private func record(_ die: inout Dwarf_Die, parent: Int32) -> Int32 {
        let tag = dwarf_tag(&die)
        guard tag > 0 else { return Int32.min }  // libdw says DW_TAG_invalid (0) for an unreadable DIE
        guard tag == Int32(DW_TAG_subprogram) || tag == Int32(DW_TAG_inlined_subroutine) else { return parent }
        var found = ScopeAttributes()
        found.askLibdw = true
        found.nameDie = DwarfAttributes.nameDie(&die)
        return add(
            &die, offset: dwarf_dieoffset(&die), parent: parent, isInlined: tag == Int32(DW_TAG_inlined_subroutine),
            found: found)
    }

    /// Adds a function or inlined call as a scope when it has addresses; returns the scope its children belong
    /// to. `found` holds what the linear pass decoded; when it says `askLibdw`, ranges and call site come from
    /// libdw (`die` must then be a readable libdw DIE).
    private func add(
        _ die: inout Dwarf_Die, offset: UInt64, parent: Int32, isInlined: Bool, found: ScopeAttributes
    ) -> Int32 {
        let index = Int32(scopes.count)
        let owner: Int32 = isInlined ? parent : -1
        let first = ranges.count
        var call = (file: found.callFile, line: found.callLine, column: found.callColumn)
        if found.askLibdw {
            DwarfRanges.append(&die, to: &ranges)
            if isInlined {
                call.file = DwarfAttributes.unsigned(&die, UInt32(DW_AT_call_file))
                call.line = DwarfAttributes.unsigned(&die, UInt32(DW_AT_call_line))
                call.column = DwarfAttributes.unsigned(&die, UInt32(DW_AT_call_column))
            }
        } else if let low = found.low, let high = found.high {
            // libdw's rule: one range from low_pc to high_pc (an address, or an offset from low_pc), before
            // any DW_AT_ranges.
            DwarfRanges.append(low: low, high: found.highIsOffset ? low &+ high : high, to: &ranges)
        } else if let offset = found.rangesOffset, !appendRangeList(at: offset) {
            ranges.removeSubrange(first...)
            DwarfRanges.append(&die, to: &ranges)
        }
        guard ranges.count > first else { return isInlined ? parent : -1 }
        var scope = Scope(
            dieOffset: found.nameDie ?? offset, parent: owner, rangeStart: Int32(first), subtreeEnd: index + 1,
            firstChild: index + 1)
        if isInlined {
            scope.callFile = UInt32(truncatingIfNeeded: call.file)
            scope.callLine = UInt32(truncatingIfNeeded: call.line)
            scope.callColumn = UInt32(truncatingIfNeeded: call.column)
        }
        scopes.append(scope)
        if owner < 0 {
            for span in ranges[first...] { rootRanges.append(Range(low: span.low, high: span.high, scope: index)) }
        }
        return index
    }

    /// Appends the ranges of the DWARF 2-4 range list at `offset` of `.debug_ranges` (pairs of addresses
    /// relative to the base address, a pair whose start is all ones setting a new base, two zeros ending it),
    /// as libdw's `dwarf_ranges` reads them. False when the list runs past the section (libdw is asked then).
    private func appendRangeList(at offset: UInt64) -> Bool {
        guard let list = rangeLists, offset < UInt64(list.section.end - list.section.start) else { return false }
        let size = list.addressSize
        let selection: UInt64 = size == 4 ? 0xFFFF_FFFF : UInt64.max
        var base = list.base
        var cursor = list.section.start + Int(offset)
        // The scanner reads little-endian files only.
        func address(_ at: UnsafePointer<UInt8>) -> UInt64 {
            let raw = UnsafeRawPointer(at)
            return size == 8
                ? UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self))
                : UInt64(UInt32(littleEndian: raw.loadUnaligned(as: UInt32.self)))
        }
        while list.section.end - cursor >= 2 * size {
            let start = address(cursor)
            let end = address(cursor + size)
            cursor += 2 * size
            if start == 0 && end == 0 { return true }
            if start == selection {
                base = end
            } else {
                let low = base &+ start
                let high = base &+ end
                // Not empty, not a linker tombstone (DwarfRanges.append's rule).
                if high > low && low != 0 && low < UInt64.max - 1 { ranges.append(Span(low: low, high: high)) }
            }
        }
        return false
    }

    /// The innermost scope containing `address` (-1 when no function covers it). Its chain outwards is
    /// `scopes[i].parent` up to a physical function (parent -1). The first `walksBeforeMap` addresses asked in
    /// a function are answered by walking down its inline tree; from the next on, by the function's flat map
    /// (built then): a function asked once or twice — most of them in a short batch (5,000 random addresses
    /// over 9,000 functions: 960 asked twice or more, 165 three times or more) — never pays for a map.
    func innermost(at address: UInt64) -> Int32 {
        let root = self.root(at: address)
        guard root >= 0 else { return root }
        if scopes[Int(root)].firstChild < 0 { readTree(of: root) }
        guard scopes[Int(root)].firstChild < scopes[Int(root)].subtreeEnd else { return root }  // nothing inlined
        let mapStart = scopes[Int(root)].mapStart
        if mapStart < 0 {
            guard mapStart <= -1 - UnitIndex.walksBeforeMap else {
                scopes[Int(root)].mapStart = mapStart - 1
                return innermostByWalkingDown(from: root, at: address)
            }
            buildMap(of: Int(root))
        }
        return innermostByMap(from: root, at: address)
    }

    /// How many addresses of a function are answered by walking down before its flat map is built.
    static let walksBeforeMap: Int32 = 2

    /// The positions in `ranges` of the ranges of the scope at `index`.
    func rangesOf(_ index: Int) -> Swift.Range<Int> {
        Int(scopes[index].rangeStart)..<(index + 1 < scopes.count ? Int(scopes[index + 1].rangeStart) : ranges.count)
    }

    /// The physical function containing `address`, or -1.
    private func root(at address: UInt64) -> Int32 { roots.scope(containing: address) }

    /// From `root` down: at each level the first child (in DIE order) whose ranges contain the address, a
    /// child's subtree skipped whole when it does not — the same answer as the flat map.
    func innermostByWalkingDown(from root: Int32, at address: UInt64) -> Int32 {
        var current = Int(root)
        var index = Int(scopes[current].firstChild)
        while index < Int(scopes[current].subtreeEnd) {
            let scope = scopes[index]
            if scope.parent == Int32(current) && contains(index, address) {
                current = index
                index = Int(scope.firstChild)
            } else {
                index = Int(scope.subtreeEnd)  // > index: every scope's subtree ends after it
            }
        }
        return Int32(current)
    }

    /// The innermost scope from `root`'s flat map (built when missing).
    func innermostByMap(from root: Int32, at address: UInt64) -> Int32 {
        if scopes[Int(root)].mapStart < 0 { buildMap(of: Int(root)) }
        let scope = scopes[Int(root)]
        let first = Int(scope.mapStart)
        let piece = partitionPoint(first..<first + Int(scope.mapCount)) { mapLows[$0] <= address }
        guard piece > first, mapOwners[piece - 1] >= 0 else { return root }
        return mapOwners[piece - 1]
    }

    private func contains(_ index: Int, _ address: UInt64) -> Bool {
        for range in ranges[rangesOf(index)]
        where range.low <= address && address < range.high {
            return true
        }
        return false
    }

    /// For tests: the physical function containing `address` and the answers of both lookups inside it.
    func innermostBothWays(at address: UInt64) -> (root: Int32, walkingDown: Int32, map: Int32)? {
        let root = self.root(at: address)
        guard root >= 0 else { return nil }
        if scopes[Int(root)].firstChild < 0 { readTree(of: root) }
        return (root, innermostByWalkingDown(from: root, at: address), innermostByMap(from: root, at: address))
    }

    /// Builds the flat map of a physical function: every boundary of its own and its inlined scopes' ranges,
    /// and for each piece between two boundaries the innermost scope covering it. Scopes are painted in DIE
    /// order, a scope claiming only pieces its parent holds, so a child never reaches outside its parent and,
    /// when siblings overlap, the first in the file wins (as in llvm-symbolizer's walk).
    private func buildMap(of root: Int) {
        let first = Int(scopes[root].firstChild)
        let end = Int(scopes[root].subtreeEnd)
        // Scratch arrays kept between calls: most functions are small, and a batch builds thousands of maps.
        // Members: the root (position 0) and the scopes of its tree (position `index - first + 1`).
        scratchMembers.removeAll(keepingCapacity: true)
        scratchMembers.append(contentsOf: repeatElement(false, count: end - first + 1))
        scratchBounds.removeAll(keepingCapacity: true)
        func position(_ index: Int) -> Int { index == root ? 0 : index - first + 1 }
        // The root, then its tree (no array of the two made per map).
        for member in 0..<(end - first + 1) {
            let index = member == 0 ? root : first + member - 1
            if index != root {
                let parent = Int(scopes[index].parent)
                guard parent == root || (parent >= first && parent < index && scratchMembers[position(parent)])
                else { continue }
            }
            scratchMembers[position(index)] = true
            for range in ranges[rangesOf(index)] {
                scratchBounds.append(range.low)
                scratchBounds.append(range.high)
            }
        }
        scratchBounds.sort()
        var unique = 0
        for bound in scratchBounds where unique == 0 || scratchBounds[unique - 1] != bound {
            scratchBounds[unique] = bound
            unique += 1
        }
        scratchBounds.removeLast(scratchBounds.count - unique)
        scratchOwners.removeAll(keepingCapacity: true)
        scratchOwners.append(contentsOf: repeatElement(-1, count: unique))
        for member in 0..<(end - first + 1) where scratchMembers[member] {
            let index = member == 0 ? root : first + member - 1
            let scope = scopes[index]
            let parent: Int32 = index == root ? -1 : scope.parent
            for range in ranges[rangesOf(index)] {
                var low = partitionPoint(0..<unique) { scratchBounds[$0] < range.low }
                while low < unique && scratchBounds[low] < range.high {
                    if scratchOwners[low] == parent { scratchOwners[low] = Int32(index) }
                    low += 1
                }
            }
        }
        let start = mapLows.count
        for piece in 0..<unique where piece == 0 || scratchOwners[piece] != scratchOwners[piece - 1] {
            mapLows.append(scratchBounds[piece])
            mapOwners.append(scratchOwners[piece])
        }
        scopes[root].mapStart = Int32(start)
        scopes[root].mapCount = Int32(mapLows.count - start)
    }

    /// Ranges covered by physical functions (for units without their own range attributes).
    var functionRanges: [(low: UInt64, high: UInt64)] { roots.ranges.map { ($0.low, $0.high) } }
}

/// `DW_AT_low_pc`/`DW_AT_high_pc`/`DW_AT_ranges` of a DIE, without empty ranges and linker tombstones
/// (address 0 or ≥ -2 for code that was discarded).
enum DwarfRanges {
    /// Appends the DIE's ranges, tagged with `scope`, to `ranges` (no temporary array per DIE).
    static func append(_ die: inout Dwarf_Die, to ranges: inout [UnitIndex.Span]) {
        var base: Dwarf_Addr = 0
        var start: Dwarf_Addr = 0
        var end: Dwarf_Addr = 0
        var offset = dwarf_ranges(&die, 0, &base, &start, &end)
        while offset > 0 {
            append(low: start, high: end, to: &ranges)
            offset = dwarf_ranges(&die, offset, &base, &start, &end)
        }
    }

    /// Appends one range unless it is empty or a tombstone.
    static func append(low: UInt64, high: UInt64, to ranges: inout [UnitIndex.Span]) {
        if high > low && low != 0 && low < UInt64.max - 1 {
            ranges.append(UnitIndex.Span(low: low, high: high))
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

    /// The offset of the DIE a function DIE's name comes from when it names nothing itself: the DIE its
    /// `DW_AT_abstract_origin` (else `DW_AT_specification`) refers to, when that is in the same unit; else nil.
    static func nameDie(_ die: inout Dwarf_Die) -> UInt64? {
        for name in [DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name]
        where dwarf_hasattr(&die, UInt32(name)) != 0 {
            return nil
        }
        var attribute = Dwarf_Attribute()
        guard
            dwarf_attr(&die, UInt32(DW_AT_abstract_origin), &attribute) != nil
                || dwarf_attr(&die, UInt32(DW_AT_specification), &attribute) != nil
        else { return nil }
        var target = Dwarf_Die()
        guard dwarf_formref_die(&attribute, &target) != nil, target.cu == die.cu else { return nil }
        let offset = dwarf_dieoffset(&target)
        return offset == UInt64.max ? nil : offset
    }

    /// The linkage name (following `DW_AT_abstract_origin` and `DW_AT_specification`), else the plain name:
    /// a pointer into the file's mapped string data, valid as long as the `Dwarf` handle.
    static func functionName(_ die: inout Dwarf_Die) -> UnsafePointer<CChar>? {
        for name in [DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name] {
            var attribute = Dwarf_Attribute()
            if dwarf_attr_integrate(&die, UInt32(name), &attribute) != nil, let text = dwarf_formstring(&attribute) {
                return text
            }
        }
        return nil
    }
}
