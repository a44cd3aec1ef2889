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
        let json = Self.lowercasingUUIDs(String(decoding: AppStoreJSON.encode(value), as: UTF8.self))
        do {
            return try signer.sign(payload: Array(json.utf8), header: [:])
        } catch {
            throw SimulatorError(.signingFailed, "cannot sign: \(error.rule.rawValue)")
        }
    }

    /// Foundation writes UUIDs in uppercase; Apple's payloads carry them in lowercase.
    static func lowercasingUUIDs(_ json: String) -> String {
        var text = json
        for key in ["\"appAccountToken\":\"", "\"deviceVerificationNonce\":\""] {
            var searchStart = text.startIndex
            while let range = text.range(of: key, range: searchStart..<text.endIndex) {
                let valueEnd = text.index(range.upperBound, offsetBy: 36, limitedBy: text.endIndex) ?? text.endIndex
                text.replaceSubrange(range.upperBound..<valueEnd, with: text[range.upperBound..<valueEnd].lowercased())
                searchStart = valueEnd
            }
        }
        return text
    }
}
