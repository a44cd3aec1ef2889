import AppStoreModels
import Foundation

/// A compact JWS (`header.payload.signature`) split and base64url-decoded, not yet trusted.
struct CompactJWS {
    /// Apple's signed payloads are a few KiB; anything over 1 MiB is refused before parsing.
    static let maximumLength = 1 << 20

    /// The base64url header text; decoded only when needed, since a header seen before (same
    /// algorithm, same certificates) is recognised from its text by the chain cache.
    let headerSegment: ArraySlice<UInt8>
    let payload: [UInt8]
    let signature: [UInt8]
    /// The ASCII `header.payload` the signature covers.
    let signingInput: ArraySlice<UInt8>

    init(_ token: String) throws(TrustError) {
        let bytes = Array(token.utf8)
        guard bytes.count <= Self.maximumLength else {
            throw TrustError(.tooLarge, "token of \(bytes.count) bytes exceeds \(Self.maximumLength)")
        }
        let dots = bytes.indices.filter { bytes[$0] == UInt8(ascii: ".") }
        guard dots.count == 2 else {
            throw TrustError(.partCount, "compact JWS has \(dots.count + 1) parts, expected 3")
        }
        guard dots[0] > 0, let payload = Base64URL.decode(bytes: bytes[(dots[0] + 1)..<dots[1]]),
            let signature = Base64URL.decode(bytes: bytes[(dots[1] + 1)...])
        else {
            throw TrustError(.base64, "a JWS part is not unpadded base64url")
        }
        guard !payload.isEmpty else { throw TrustError(.base64, "empty JWS payload") }
        self.headerSegment = bytes[..<dots[0]]
        self.payload = payload
        self.signature = signature
        self.signingInput = bytes[..<dots[1]]
    }

    func header() throws(TrustError) -> JWSHeader {
        guard let bytes = Base64URL.decode(bytes: headerSegment), !bytes.isEmpty else {
            throw TrustError(.base64, "the JWS header is not unpadded base64url")
        }
        return try Self.decodeObject(JWSHeader.self, from: bytes, part: "header")
    }

    /// Decodes JSON that must be one object with no repeated keys.
    static func decodeObject<T: Decodable>(_ type: T.Type, from bytes: [UInt8], part: String) throws(TrustError) -> T {
        try decodeObjectAndKeys(type, from: bytes, part: part).value
    }

    /// `decodeObject`, and the keys of the top-level object.
    static func decodeObjectAndKeys<T: Decodable>(_ type: T.Type, from bytes: [UInt8], part: String)
        throws(TrustError) -> (value: T, keys: Set<String>)
    {
        let notJSON: TrustRule = part == "header" ? .headerNotJSON : .payloadNotJSON
        let scan = DuplicateKeyCheck.scan(bytes)
        switch scan.outcome {
        case .unique: break
        case .duplicate(let key): throw TrustError(.duplicateKey, "JWS \(part) repeats key '\(key)'")
        case .malformed, .tooDeep: throw TrustError(notJSON, "JWS \(part) is not a JSON object")
        }
        guard bytes.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "{") else {
            throw TrustError(notJSON, "JWS \(part) is not a JSON object")
        }
        do {
            return (try JSONDecoder().decode(T.self, from: Data(bytes)), scan.topLevelKeys)
        } catch let error as DecodingError {
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty {
                throw TrustError(notJSON, "JWS \(part) is not valid JSON")
            }
            let path = AppStoreJSON.describe(error, type: String(describing: T.self)).path
            throw TrustError(
                part == "header" ? .headerNotJSON : .payloadSchema, "JWS \(part) field '\(path)' has the wrong type")
        } catch {
            throw TrustError(notJSON, "JWS \(part) is not valid JSON")
        }
    }
}

/// The protected header fields Storekeeper reads.
struct JWSHeader: Decodable {
    var alg: String?
    var x5c: [String]?
    var kid: String?
    var typ: String?
}
