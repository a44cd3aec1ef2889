import Foundation
import Testing

@testable import AppStoreTrust

/// Base64url as tokens use it: every byte string has exactly one accepted text.
struct Base64URLTests {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")

    @Test func everyLengthRoundTripsExactly() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...40 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let text = Base64URL.encode(bytes)
            #expect(text.count == (length * 4 + 2) / 3)
            #expect(Base64URL.decode(text) == bytes)
        }
        #expect(Base64URL.encode(Array("any carnal pleas".utf8)) == "YW55IGNhcm5hbCBwbGVhcw")
        #expect(Base64URL.decode("YW55IGNhcm5hbCBwbGVhcw") == Array("any carnal pleas".utf8))
    }

    /// The encoder (written out, for speed) gives what Foundation's base64 gives, made url-safe
    /// and unpadded.
    @Test func encodingEqualsFoundationsBase64MadeURLSafe() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let reference = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(Base64URL.encode(bytes) == reference, "\(bytes)")
        }
        #expect(Base64URL.encode([0xFB, 0xFF, 0xBF]) == "-_-_")
    }

    /// The last character of a 2- or 3-character tail has unused low bits; a text with any of
    /// them set decodes (by most decoders) to the same bytes as the canonical text, so a token
    /// changed there would pass for the original (the dashboard's cookie test met this 1 time
    /// in 16). Refused instead.
    @Test func unusedBitsInTheLastCharacterAreRefused() throws {
        for length in [1, 2, 4, 5, 31, 32] {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let text = Base64URL.encode(bytes)
            let last = try #require(text.last)
            let lastIndex = try #require(Self.alphabet.firstIndex(of: last))
            let unusedBits = length % 3 == 1 ? 4 : 2
            for bit in 0..<unusedBits {
                let changed = String(text.dropLast()) + String(Self.alphabet[lastIndex | (1 << bit)])
                #expect(Base64URL.decode(changed) == nil, "length \(length), bit \(bit): \(changed)")
            }
        }
        // Whole groups have no unused bits: any last character is its own value.
        #expect(Base64URL.decode("AAAB") == [0, 0, 1])
    }

    @Test func malformedTextIsRefused() {
        for bad in ["A", "AAAAA", "AA==", "AA A", "AA+A", "AA/A", "AA\nA", "é"] {
            #expect(Base64URL.decode(bad) == nil, "\(bad)")
        }
        #expect(Base64URL.decode("") == [])
    }
}
