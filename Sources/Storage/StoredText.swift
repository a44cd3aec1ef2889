import Foundation

/// Comparing text read back from the store with text kept in memory.
public enum StoredText {
    /// Byte equality: `String ==` compares canonical equivalence, which two different stored
    /// texts can share, and a cache must reuse a decoded value only for the very bytes it came
    /// from.
    public static func sameBytes(_ lhs: String, _ rhs: String) -> Bool {
        var lhs = lhs
        var rhs = rhs
        return lhs.withUTF8 { left in
            rhs.withUTF8 { right in
                left.count == right.count
                    && (left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0)
            }
        }
    }
}
