extension ModuleSymbolicator {
    /// Every address where this symbolicator's answer may change, ascending and each once: DWARF's (units, line
    /// rows, scopes; see ``DwarfIndex/AnswerBoundWalk``, which indexes the units as it goes) and the symbol
    /// table's (each symbol's start and end). Between two neighbours every address gets the same frames (a
    /// symbol's offset aside). For ``SymbolCacheWriter``.
    /// `mostActiveSpans`: see ``DwarfIndex/AnswerBoundWalk/mostActiveSpans`` (tests lower it).
    func answerBoundWalk(mostActiveSpans: Int = 64) -> DwarfIndex.AnswerBoundWalk {
        let table = symbols
        var symbolBounds: [UInt64] = []
        symbolBounds.reserveCapacity(2 * table.count)
        for position in 0..<table.count {
            symbolBounds.append(table.addresses[position])
            symbolBounds.append(table.end(at: position))
        }
        DwarfIndex.AnswerBoundWalk.sortSmallOrLarge(&symbolBounds)
        return DwarfIndex.AnswerBoundWalk(dwarfIndex, merging: symbolBounds, mostActiveSpans: mostActiveSpans)
    }
}
