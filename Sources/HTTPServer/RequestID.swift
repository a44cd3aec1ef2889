import Foundation

/// Request ids: accepted from the client's `X-Request-Id` when well-formed, generated otherwise.
///
/// A client-supplied id is used only if it is 1...128 characters of `A-Z a-z 0-9 - _ . :`, so
/// it is safe to echo in headers and logs (no spaces, quotes, control characters or CR/LF).
/// - Note: Stateless; safe from any thread.
public enum RequestID {
    /// The header carrying the request id, in both directions.
    public static let headerName = "X-Request-Id"

    /// Whether a client-supplied id may be used as is.
    public static func isValid(_ candidate: String) -> Bool {
        let utf8 = candidate.utf8
        guard (1...128).contains(utf8.count) else { return false }
        return utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"),
                UInt8(ascii: "."), UInt8(ascii: ":"):
                true
            default:
                false
            }
        }
    }

    /// A fresh random id (a lowercase UUID).
    public static func generate() -> String {
        UUID().uuidString.lowercased()
    }

    /// The client's id if valid, else a fresh one.
    public static func resolve(from headers: HTTPHeaders) -> String {
        if let sent = headers[headerName], isValid(sent) { return sent }
        return generate()
    }
}
