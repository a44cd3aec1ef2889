import Foundation
import Testing

@testable import HTTPServer

/// The checks on a complete request head: control characters in the target and ambiguous body
/// framing.
@Suite struct RequestHeadPolicyTests {
    @Test func targetWithAControlCharacterIsRefused() {
        func refusal(_ target: String, delimited: Int? = nil) -> String? {
            RequestTargetPolicy.refusal(
                visible: target.utf8, visibleLength: target.utf8.count, delimitedLength: delimited)?.message
        }
        #expect(refusal("/v1/apps/a/customers/u1?x=%00") == nil)
        #expect(refusal("/v1/apps/a/customers/u1", delimited: 23) == nil)
        // What the C string showed was cut short by a NUL.
        #expect(refusal("/customers/u1", delimited: 32) == "The request target contains a NUL byte.")
        for byte: UInt8 in [0x01, 0x09, 0x0B, 0x1F, 0x7F] {
            let target = "/customers/u1" + String(UnicodeScalar(byte)) + "x"
            #expect(refusal(target) == "The request target contains a control character.", "byte \(byte)")
        }
        let error = RequestTargetPolicy.refusal(visible: "/a\u{01}".utf8, visibleLength: 3, delimitedLength: 3)
        #expect(error?.status == .badRequest)
        #expect(error?.code == "invalid_request_target")
    }

    @Test func ambiguousFramingIsRefused() {
        func verdict(_ fields: [(String, String)], http10: Bool = false) -> String? {
            MessageFramingPolicy.refusal(headers: HTTPHeaders(fields), isHTTP10: http10)
                .map { "\($0.status.code) \($0.code)" }
        }
        #expect(verdict([("Content-Length", "5")]) == nil)
        #expect(verdict([("Transfer-Encoding", "chunked")]) == nil)
        #expect(verdict([("transfer-encoding", " Chunked ")]) == nil)
        #expect(verdict([("Content-Length", "5"), ("Content-Length", "5")]) == nil)
        #expect(verdict([]) == nil)
        #expect(verdict([("Content-Length", "5"), ("Transfer-Encoding", "chunked")]) == "400 invalid_framing")
        #expect(verdict([("Transfer-Encoding", "chunked"), ("Content-Length", "5")]) == "400 invalid_framing")
        #expect(verdict([("Transfer-Encoding", "chunked")], http10: true) == "400 invalid_framing")
        #expect(verdict([("Transfer-Encoding", "gzip")]) == "400 invalid_framing")
        #expect(verdict([("Transfer-Encoding", "chunked, gzip")]) == "400 invalid_framing")
        #expect(verdict([("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "chunked")]) == "400 invalid_framing")
        #expect(verdict([("Transfer-Encoding", "")]) == "400 invalid_framing")
        #expect(verdict([("Transfer-Encoding", "gzip, chunked")]) == "501 unsupported_transfer_coding")
        #expect(verdict([("Content-Length", "3"), ("Content-Length", "4")]) == "400 invalid_framing")
        #expect(verdict([("Content-Length", "3, 4")]) == "400 invalid_framing")
    }
}
