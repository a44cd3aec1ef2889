/// Text standing for a signed payload of Apple's size and shape, so a benchmark's store holds
/// rows as long as production's: a notification's `signedPayload` is about 11.6 KB (three JWS
/// with their certificate chains), a transaction's or renewal info's JWS about 3.4 KB. Each
/// starts with the same header (`header.rest`), as every JWS signed with one certificate chain
/// does: 2.2 KB, the size of the simulator's (Apple's own chain makes about 5 KB), which a
/// store may keep once (migration `0029_jws_headers`). Placeholders of a few bytes hid what the
/// payloads cost (SQLite reads a row's columns in order through its overflow pages; each
/// payload is written, logged and synced).
enum SignedPayloadFiller {
    static let notificationLength = 11_600
    static let transactionLength = 3_400
    static let renewalInfoLength = 3_300
    static let headerLength = 2_200

    /// Made once: `String(repeating:count:)` appends its text one copy at a time, and building
    /// each payload that way was most of a bulk import's time.
    private static let filler = [UInt8](repeating: UInt8(ascii: "A"), count: 16_384)

    /// The header every payload starts with (base64url characters, no `.`).
    private static let header = String(
        decoding: (0..<headerLength).map { Array("eyJhbGciOiJFUzI1NiIsIng1YyI6WyJNSUlF".utf8)[$0 % 36] },
        as: UTF8.self)

    /// The shared header, a dot, `tag`, a dot, then filler up to `length` bytes (at most 16 KB
    /// past the header).
    static func text(_ tag: String, length: Int) -> String {
        let head = header + "." + tag + "."
        return head + String(decoding: filler.prefix(max(0, length - head.utf8.count)), as: UTF8.self)
    }
}
