import Testing

@testable import Storage

/// A contribution's stored text: the JSON array of its entries' texts, padded with spaces on
/// SQLite past `paddedContributionBytes` (to the stored size when it fits, else to whole pages
/// with room to grow), written in one buffer.
@Suite struct ContributionTextTests {
    static func text(_ fragments: [String], stored: String? = nil, _ dialect: SQLDialect = .sqlite) -> String {
        SQLStoreTransaction.keepingStoredSize(joining: fragments, stored: stored, dialect: dialect)
    }

    /// 40 entries of 100 bytes: 4,041 bytes joined, past the padding threshold.
    static let long = (0..<40).map {
        String(format: "{\"k\":%04d,\"v\":\"", $0) + String(repeating: "x", count: 83) + "\"}"
    }
    static let joined = "[" + long.joined(separator: ",") + "]"

    @Test func aShortContributionIsTheJoinedArray() {
        #expect(Self.text([]) == "[]")
        #expect(Self.text(["{\"a\":1}"]) == "[{\"a\":1}]")
        #expect(Self.text(["{\"a\":1}", "{\"b\":\"é\"}"], .postgres) == "[{\"a\":1},{\"b\":\"é\"}]")
        #expect(Self.text(["1", "2", "3"], stored: String(repeating: " ", count: 9_000)) == "[1,2,3]")
    }

    @Test func aLongContributionIsPaddedOnSQLiteOnly() {
        #expect(Self.joined.utf8.count == 4_041)
        // Nothing stored: whole pages with room (4,041 + 505 + 1,024, rounded up to 8,192).
        let fresh = Self.text(Self.long)
        #expect(fresh.utf8.count == 8_192)
        #expect(fresh.hasPrefix(Self.joined))
        #expect(fresh.utf8.dropFirst(4_041).allSatisfy { $0 == UInt8(ascii: " ") })
        // A stored text it fits in: that size, so SQLite rewrites the row in place.
        #expect(Self.text(Self.long, stored: String(repeating: " ", count: 5_000)).utf8.count == 5_000)
        #expect(Self.text(Self.long, stored: String(repeating: " ", count: 4_041)) == Self.joined)
        // Stored too small, or far larger (4,041 + 1,010 + 8,192 is the most kept): fresh room.
        #expect(Self.text(Self.long, stored: String(repeating: " ", count: 4_000)) == fresh)
        #expect(Self.text(Self.long, stored: String(repeating: " ", count: 13_243)).utf8.count == 13_243)
        #expect(Self.text(Self.long, stored: String(repeating: " ", count: 13_244)) == fresh)
        // PostgreSQL writes a new row version whatever the size: never padded.
        #expect(Self.text(Self.long, stored: String(repeating: " ", count: 5_000), .postgres) == Self.joined)
    }
}
