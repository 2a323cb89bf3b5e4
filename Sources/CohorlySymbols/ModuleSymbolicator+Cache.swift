extension ModuleSymbolicator {
    /// Every address where this symbolicator's answer may change, ascending, each once: DWARF's (units, line
    /// rows, scopes; see ``DwarfIndex/appendAnswerBoundaries(to:)``) and the symbol table's (each symbol's
    /// start and end). Between two neighbours every address gets the same frames (a symbol's offset aside).
    /// Indexes every unit. For ``SymbolCacheWriter``.
    func answerBoundaries() -> [UInt64] {
        var bounds: [UInt64] = []
        dwarfIndex?.appendAnswerBoundaries(to: &bounds)
        let table = symbols
        bounds.reserveCapacity(bounds.count + 2 * table.count)
        for position in 0..<table.count {
            bounds.append(table.addresses[position])
            bounds.append(table.end(at: position))
        }
        bounds.sort()
        var unique = 0
        for index in bounds.indices where unique == 0 || bounds[unique - 1] != bounds[index] {
            bounds[unique] = bounds[index]
            unique += 1
        }
        bounds.removeSubrange(unique...)
        return bounds
    }
}
