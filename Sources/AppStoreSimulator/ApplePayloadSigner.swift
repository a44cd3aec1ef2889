import AppStoreModels
import AppStoreTrust
import Foundation

/// Signs payloads the way the App Store does: compact JWS, header `{"alg":"ES256","x5c":[leaf,
/// intermediate, root]}` (no `typ`), payload JSON without nulls, dates in milliseconds, UUIDs in
/// lowercase as Apple writes `appAccountToken`.
/// - Note: Immutable; `Sendable`.
struct ApplePayloadSigner: Sendable {
    let signer: JWSSigner

    init(authority: TestCertificateAuthority) { signer = authority.signer }

    func sign<T: Encodable>(_ value: T) throws(SimulatorError) -> String {
        let json = Self.lowercasingUUIDs(AppStoreJSON.encodeText(value))
        do {
            return try signer.sign(payload: Array(json.utf8), header: [:])
        } catch {
            throw SimulatorError(.signingFailed, "cannot sign: \(error.rule.rawValue)")
        }
    }

    /// Foundation writes UUIDs in uppercase; Apple's payloads carry them in lowercase.
    static func lowercasingUUIDs(_ json: String) -> String {
        // On the UTF-8 bytes: Foundation's `range(of:)` goes through NSString and was a fiftieth
        // of the simulator's time.
        var bytes = Array(json.utf8)
        var changed = false
        for key in lowercasedKeys {
            var start = 0
            while let found = firstIndex(of: key, in: bytes, from: start) {
                let valueEnd = min(found + key.count + 36, bytes.count)
                for index in (found + key.count)..<valueEnd
                where (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(bytes[index]) {
                    bytes[index] += 32
                    changed = true
                }
                start = valueEnd
            }
        }
        return changed ? String(decoding: bytes, as: UTF8.self) : json
    }

    private static let lowercasedKeys = [
        Array("\"appAccountToken\":\"".utf8), Array("\"deviceVerificationNonce\":\"".utf8),
    ]

    private static func firstIndex(of needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard needle.count <= haystack.count - start else { return nil }
        var index = start
        while index <= haystack.count - needle.count {
            if haystack[index] == needle[0] && haystack[index..<(index + needle.count)].elementsEqual(needle) {
                return index
            }
            index += 1
        }
        return nil
    }
}
