import Testing

@testable import StorekeeperIngestion

/// Which app user ids are accepted: 1 to 256 bytes of UTF-8, no `/` (by scalar: one carrying a
/// combining mark is still a `/` in a path), no `..`, no control characters; the ASCII fast path
/// decides as the search does.
@Suite struct AppUserIdValidityTests {
    static func characterSearch(_ value: String) -> Bool {
        (1...256).contains(value.utf8.count) && !value.unicodeScalars.contains("/") && !value.contains("..")
            && !value.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }

    @Test(arguments: [
        ("user-1", true), ("a", true), ("", false), ("a/b", false), ("a..b", false), ("a.b.c", true), (".", true),
        ("..", false), ("a\u{7F}", false), ("tab\there", false), ("line\r\n", false), ("ü", true),
        ("..\u{301}", true), (".\u{301}.", true), ("é/", false), ("/\u{301}", false), ("a/\u{301}b", false),
        (String(repeating: "x", count: 256), true),
        (String(repeating: "x", count: 257), false), (String(repeating: "é", count: 129), false),
    ])
    func validity(value: String, valid: Bool) {
        #expect(CustomerIdentity.isValidAppUserId(value) == valid)
        #expect(Self.characterSearch(value) == valid)
    }

    /// Every ASCII id of one or two characters, and every three-character id over the
    /// characters that matter: the fast path agrees with the character search on each.
    @Test func asciiFastPathAgreesExhaustively() {
        let ascii = (0..<128).map { String(UnicodeScalar(UInt8($0))) }
        var ids = ascii
        for first in ascii { for second in ascii { ids.append(first + second) } }
        let special = [".", "/", "a", "\r", "\n", "\u{7F}", " ", "\t", "\u{1F}"]
        for first in special { for second in special { for third in special { ids.append(first + second + third) } } }
        let disagreements = ids.filter { CustomerIdentity.isValidAppUserId($0) != Self.characterSearch($0) }
        #expect(disagreements == [])
        #expect(ids.count == 128 + 128 * 128 + 9 * 9 * 9)
    }
}
