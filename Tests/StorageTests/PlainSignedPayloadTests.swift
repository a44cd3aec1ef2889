import AppStoreModels
import Foundation
import Testing

@testable import StorekeeperIngestion

/// The fast reading of a V2 notification body (`NotificationIngestor.plainSignedPayload`)
/// takes only the shape Apple posts and agrees with the general decoding on it; every other
/// body is left to the general decoding.
@Suite struct PlainSignedPayloadTests {
    /// What the general decoding finds as `signedPayload`, if the body is an object with one.
    static func general(_ body: String) -> String? {
        guard case .object(let object)? = try? AppStoreJSON.decode(JSONValue.self, from: Data(body.utf8)),
            case .string(let value)? = object["signedPayload"]
        else { return nil }
        return value
    }

    @Test func applesShapeIsReadAsTheGeneralDecodingReadsIt() {
        for (body, expected) in [
            (#"{"signedPayload":"eyJhbGciOiJFUzI1NiJ9.e30.c2ln-_09"}"#, "eyJhbGciOiJFUzI1NiJ9.e30.c2ln-_09"),
            (" \n\t{ \"signedPayload\" :\r\n \"a.b.c\" }\n", "a.b.c"),
            (#"{"signedPayload":""}"#, ""),
        ] {
            #expect(NotificationIngestor.plainSignedPayload(in: Data(body.utf8)) == expected, "\(body)")
            #expect(Self.general(body) == expected, "\(body)")
        }
    }

    @Test func everyOtherBodyIsLeftToTheGeneralDecoding() {
        for body in [
            #"{"signedPayload":"a\/b"}"#, #"{"signedPayload":"a\u002eb"}"#, #"{"signedPayload":"a+b"}"#,
            #"{"signedPayload":"é"}"#, #"{"signedPayload":"a","x":1}"#, #"{"x":1,"signedPayload":"a"}"#,
            #"{"signedPayload":"a","signedPayload":"b"}"#, #"{"signedPayload":null}"#, #"{"signedPayload":1}"#,
            #"{"signedPayload":"a"} x"#, #"[{"signedPayload":"a"}]"#, #"{"signedPayload":"a""#,
            #"{"signedpayload":"a"}"#, #"{ "signedPayload" "a" }"#, "", "{}", "\u{FEFF}{\"signedPayload\":\"a\"}",
        ] {
            #expect(NotificationIngestor.plainSignedPayload(in: Data(body.utf8)) == nil, "\(body)")
        }
    }

    @Test func jwsCharactersAreBase64URLAndTheDot() {
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.".utf8)
        for byte in UInt8.min...UInt8.max {
            #expect(NotificationIngestor.isJWSCharacter(byte) == alphabet.contains(byte), "\(byte)")
        }
    }
}
