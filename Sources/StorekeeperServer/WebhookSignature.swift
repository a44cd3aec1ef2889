import AppStoreTrust
import Foundation

/// The `Storekeeper-Signature` header: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">`
/// keyed with the endpoint's secret. Receivers recompute it and compare in constant time,
/// and reject timestamps too far from their clock (replays).
/// - Note: Stateless; thread-safe.
public enum WebhookSignature {
    public static let headerName = "Storekeeper-Signature"

    /// The header value for `body` signed at `unixSeconds`.
    public static func header(body: Data, secret: String, unixSeconds: Int64) -> String {
        "t=\(unixSeconds),v1=\(hex(body: body, secret: secret, unixSeconds: unixSeconds))"
    }

    static func hex(body: Data, secret: String, unixSeconds: Int64) -> String {
        let message = Array("\(unixSeconds).".utf8) + Array(body)
        return Digest.hex(Digest.hmacSHA256(key: Array(secret.utf8), message: message))
    }

    /// Checks a received header: well-formed, within `tolerance` seconds of `nowUnixSeconds`,
    /// and a `v1` that matches (constant-time comparison).
    public static func isValid(
        header: String, body: Data, secret: String, nowUnixSeconds: Int64, toleranceSeconds: Int64 = 300
    ) -> Bool {
        var timestamp: Int64?
        var signatures: [String] = []
        for part in header.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { return false }
            switch pair[0].trimmingCharacters(in: .whitespaces) {
            case "t": timestamp = Int64(pair[1])
            case "v1": signatures.append(pair[1])
            default: continue
            }
        }
        guard let timestamp, abs(nowUnixSeconds - timestamp) <= toleranceSeconds else { return false }
        let expected = Array(hex(body: body, secret: secret, unixSeconds: timestamp).utf8)
        return signatures.contains { Digest.constantTimeEqual(Array($0.utf8), expected) }
    }
}
