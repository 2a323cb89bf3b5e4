/// The nearest of a few known words to a mistyped one, for "did you mean …?" hints.
package enum Suggestion {
    /// The candidate closest to `word` by edit distance (insertions, deletions, substitutions and swaps of two
    /// neighbours count one each), when it is close enough to be a typo: at most 2 edits, and fewer than half of
    /// the word's letters. Ties go to the candidate listed first.
    package static func closest(to word: String, among candidates: some Sequence<String>) -> String? {
        let typed = Array(word.lowercased().unicodeScalars)
        var best: (candidate: String, distance: Int)?
        for candidate in candidates where candidate != word {
            let distance = editDistance(typed, Array(candidate.lowercased().unicodeScalars))
            if distance < (best?.distance ?? Int.max) { best = (candidate, distance) }
        }
        guard let best, best.distance <= 2, best.distance * 2 < max(typed.count, 2) else { return nil }
        return best.candidate
    }

    /// The optimal-string-alignment distance between `a` and `b` (Damerau–Levenshtein without repeated edits of
    /// one substring): the edits that turn `a` into `b`.
    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        // Three rows of the dynamic-programming table: two back (for swaps), one back, and the current one.
        var twoBack = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { value = min(value, twoBack[j - 2] + 1) }
                current[j] = value
            }
            (twoBack, previous, current) = (previous, current, twoBack)
        }
        return previous[b.count]
    }
}
