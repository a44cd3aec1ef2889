import COpenSSL
import Glibc
import Synchronization

/// A compact JWS as `signed_transactions` (migration `0029_jws_headers`) and `notifications`
/// (`0030_notification_jws_headers`) store it: a header long enough to be a certificate chain
/// is kept once in `jws_headers` under its digest, and the row holds the digest and the rest.
/// Splitting at the first `.` and joining with one gives back the same bytes, whatever the
/// text.
struct StoredJWS {
    /// The shortest header stored apart: Apple's carry a chain of three certificates (2 KB and
    /// more); a header without `x5c` (a few dozen bytes) is not worth a row of its own.
    static let minimumSharedHeader = 256

    /// `jws_headers.digest` and `header`, when the header is stored apart.
    var header: (digest: String, text: String)?
    /// `signed_transactions.jws`: everything after the header's `.`, or the whole text.
    var rest: String

    init(_ jws: String) {
        var text = jws
        // Over the bytes (`memchr`, `memcmp`): `utf8.firstIndex(of:)` went byte by byte through
        // the 2 KB header, half of a bulk import's inserts.
        let split = text.withUTF8 { bytes -> (header: (digest: String, text: String), rest: String)? in
            guard let base = bytes.baseAddress, let found = memchr(base, Int32(UInt8(ascii: ".")), bytes.count) else {
                return nil
            }
            let length = UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
            guard length >= Self.minimumSharedHeader,
                let header = Self.header(UnsafeBufferPointer(rebasing: bytes[..<length]))
            else { return nil }
            return (header, String(decoding: UnsafeBufferPointer(rebasing: bytes[(length + 1)...]), as: UTF8.self))
        }
        header = split?.header
        rest = split?.rest ?? jws
    }

    /// The stored text back: `header.rest` when the row names a header, else the row's text.
    /// A digest whose header is missing is a corrupt store, never a JWS without its header.
    static func joined(rest: String?, digest: String?, header: String?) throws(StoreError) -> String? {
        guard let rest else {
            if let digest { throw StoreError(.corruptValue, "a stored JWS names header \(digest) but has no text") }
            return nil
        }
        let text: String = try joined(rest: rest, digest: digest, header: header)
        return text
    }

    /// The same for a column that is never NULL.
    static func joined(rest: String, digest: String?, header: String?) throws(StoreError) -> String {
        guard let digest else { return rest }
        guard let header else {
            throw StoreError(.corruptValue, "a stored JWS refers to header \(digest), which is missing")
        }
        return header + "." + rest
    }

    /// The last header hashed and its digest: every transaction of a store shares one or two
    /// headers, and a bulk import would otherwise copy and hash 2–5 KB for each row.
    private static let lastHeader = Mutex<(digest: String, text: String)?>(nil)

    /// `bytes` as a header and its digest (the last one's, when the bytes are its text); nil
    /// unless they are base64url, as a JWS header is: a V1 notification's JSON body is stored
    /// whole, not split at a `.` of its text.
    private static func header(_ bytes: UnsafeBufferPointer<UInt8>) -> (digest: String, text: String)? {
        let known = lastHeader.withLock { last -> (digest: String, text: String)? in
            guard var last, last.text.utf8.count == bytes.count else { return nil }
            let same = last.text.withUTF8 { memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 }
            return same ? last : nil
        }
        if let known { return known }
        guard bytes.allSatisfy(isBase64URL) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        let header = (digest: digest(of: text), text: text)
        lastHeader.withLock { $0 = header }
        return header
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }

    /// The hex of the SHA-256 of `header`'s bytes.
    static func digest(of header: String) -> String {
        var output = [UInt8](repeating: 0, count: 32)
        let hashed = Array(header.utf8).withUnsafeBufferPointer { buffer in
            EVP_Digest(buffer.baseAddress, buffer.count, &output, nil, EVP_sha256(), nil)
        }
        // EVP_Digest fails only without memory or without a SHA-256 provider: no digest is
        // better than a wrong one standing for the header.
        precondition(hashed == 1, "SHA-256 of a JWS header failed")
        let hex = Array("0123456789abcdef".utf8)
        var digits: [UInt8] = []
        digits.reserveCapacity(64)
        for byte in output {
            digits.append(hex[Int(byte >> 4)])
            digits.append(hex[Int(byte & 0x0f)])
        }
        return String(decoding: digits, as: UTF8.self)
    }
}
