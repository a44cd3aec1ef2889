import Foundation
import Testing

@testable import StorekeeperServer

/// The key after `Bearer ` is trimmed as `CharacterSet.whitespaces` trims, with a fast path
/// for the usual key that has nothing to trim.
@Suite struct BearerKeyTrimmingTests {
    @Test(arguments: [
        "sk_pub_abc", " sk_pub_abc", "sk_pub_abc ", "\tsk_pub_abc\t", "  ", "", "\u{00A0}sk\u{2003}",
        "sk\u{00A0}", "\u{3000}sk_sec_x", "sk pub", "é", "\u{000B}sk\u{000C}",
    ])
    func trimsAsFoundationDoes(value: String) {
        let header = "Bearer " + value
        let key = header.dropFirst("Bearer ".count)
        #expect(AuthenticationMiddleware.trimmed(key) == String(key).trimmingCharacters(in: .whitespaces))
    }
}
