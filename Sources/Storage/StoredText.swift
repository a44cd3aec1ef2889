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

    /// Byte equality of a text kept in memory and one the store holds in place.
    public static func sameBytes(_ text: String, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var text = text
        return text.withUTF8 { utf8 in
            utf8.count == bytes.count
                && (utf8.isEmpty || memcmp(utf8.baseAddress!, bytes.baseAddress!, utf8.count) == 0)
        }
    }
}
