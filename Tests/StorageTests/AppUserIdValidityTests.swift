import Testing

@testable import StorekeeperIngestion

/// Which app user ids are accepted: 1 to 256 bytes of UTF-8, no `/`, no `..`, no control
/// characters; the ASCII fast path decides as the character search does.
@Suite struct AppUserIdValidityTests {
    static func characterSearch(_ value: String) -> Bool {
        (1...256).contains(value.utf8.count) && !value.contains("/") && !value.contains("..")
            && !value.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }

    @Test(arguments: [
        ("user-1", true), ("a", true), ("", false), ("a/b", false), ("a..b", false), ("a.b.c", true), (".", true),
        ("..", false), ("a\u{7F}", false), ("tab\there", false), ("line\r\n", false), ("ü", true),
        ("..\u{301}", true), (".\u{301}.", true), ("é/", false), (String(repeating: "x", count: 256), true),
        (String(repeating: "x", count: 257), false), (String(repeating: "é", count: 129), false),
    ])
    func validity(value: String, valid: Bool) {
        #expect(CustomerIdentity.isValidAppUserId(value) == valid)
        #expect(Self.characterSearch(value) == valid)
    }
}
