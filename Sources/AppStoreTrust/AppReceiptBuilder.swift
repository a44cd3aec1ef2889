import AppStoreModels
import COpenSSL
import Foundation

/// Writes StoreKit 1 app receipts: the attribute SET encoded with OpenSSL's ASN.1 encoders and
/// wrapped in PKCS#7 SignedData. Used by the App Store simulator and by tests.
public struct AppReceiptBuilder: Sendable {
    public enum Digest: Sendable { case sha1, sha256 }

    public var attributes: [(Int, ReceiptValue)] = []
    public var inAppPurchases: [[(Int, ReceiptValue)]] = []

    public init() {}

    public mutating func set(_ type: Int, _ value: ReceiptValue) { attributes.append((type, value)) }

    /// RFC 3339 text as Apple writes receipt dates.
    public static func date(_ timestamp: Timestamp) -> ReceiptValue {
        .string(ReceiptDates.format(timestamp))
    }

    /// The DER of the receipt payload (the SET inside the PKCS#7).
    public func payloadDER() throws(TrustError) -> [UInt8] {
        var all = attributes
        for purchase in inAppPurchases {
            all.append((17, .bytes(try Self.set(purchase))))
        }
        return try Self.set(all)
    }

    /// Signs the payload with `key` / `certificate`, embedding `chain` (intermediates).
    public func signed(certificate: Certificate, key: PrivateKey, chain: [Certificate], digest: Digest = .sha256)
        throws(TrustError) -> [UInt8]
    {
        let payload = try payloadDER()
        guard let certificates = OPENSSL_sk_new_null() else { throw TrustError(.signingFailed, "allocation failed") }
        defer { COpenSSL_sk_X509_free(certificates) }
        for extra in chain { OPENSSL_sk_push(certificates, UnsafeRawPointer(extra.handle)) }
        let flags = Int32(PKCS7_BINARY | PKCS7_PARTIAL | PKCS7_NOSMIMECAP)
        let bytes: [UInt8]? =
            withMemoryBIO(payload) { input -> [UInt8]? in
                guard let pkcs7 = PKCS7_sign(nil, nil, certificates, nil, flags) else { return nil }
                defer { PKCS7_free(pkcs7) }
                let algorithm = digest == .sha1 ? EVP_sha1() : EVP_sha256()
                guard PKCS7_sign_add_signer(pkcs7, certificate.handle, key.handle, algorithm, flags) != nil,
                    PKCS7_final(pkcs7, input, flags) == 1
                else { return nil }
                return derEncode { i2d_PKCS7(pkcs7, $0) }
            } ?? nil
        guard let bytes else { throw TrustError(.signingFailed, "PKCS#7 signing failed: \(OpenSSLFailure.drain())") }
        return bytes
    }

    // MARK: ASN.1 through OpenSSL

    static func set(_ attributes: [(Int, ReceiptValue)]) throws(TrustError) -> [UInt8] {
        guard let stack = OPENSSL_sk_new_null() else { throw TrustError(.signingFailed, "allocation failed") }
        defer { COpenSSL_sk_ASN1_TYPE_pop_free(stack) }
        for (type, value) in attributes {
            let sequence = try sequenceDER([.integer(Int64(type)), .integer(1), .bytes(try valueDER(value))])
            guard let element = ASN1_TYPE_new(), let string = ASN1_STRING_type_new(V_ASN1_SEQUENCE) else {
                throw TrustError(.signingFailed, "allocation failed")
            }
            sequence.withUnsafeBufferPointer { _ = ASN1_STRING_set(string, $0.baseAddress, Int32($0.count)) }
            ASN1_TYPE_set(element, V_ASN1_SEQUENCE, UnsafeMutableRawPointer(string))
            OPENSSL_sk_push(stack, UnsafeRawPointer(element))
        }
        guard let der = derEncode({ i2d_ASN1_SET_ANY(stack, $0) }) else {
            throw TrustError(.signingFailed, "cannot encode receipt SET")
        }
        return der
    }

    /// SEQUENCE of INTEGERs and OCTET STRINGs (`.bytes` here means OCTET STRING content).
    private static func sequenceDER(_ fields: [ReceiptValue]) throws(TrustError) -> [UInt8] {
        guard let stack = OPENSSL_sk_new_null() else { throw TrustError(.signingFailed, "allocation failed") }
        defer { COpenSSL_sk_ASN1_TYPE_pop_free(stack) }
        for field in fields {
            OPENSSL_sk_push(stack, UnsafeRawPointer(try asn1Type(field)))
        }
        guard let der = derEncode({ i2d_ASN1_SEQUENCE_ANY(stack, $0) }) else {
            throw TrustError(.signingFailed, "cannot encode receipt attribute")
        }
        return der
    }

    /// DER of one attribute value: UTF8String for text, INTEGER, or the bytes verbatim.
    private static func valueDER(_ value: ReceiptValue) throws(TrustError) -> [UInt8] {
        if case .bytes(let raw) = value { return raw }
        let element = try asn1Type(value)
        defer { ASN1_TYPE_free(element) }
        guard let der = derEncode({ i2d_ASN1_TYPE(element, $0) }) else {
            throw TrustError(.signingFailed, "cannot encode receipt value")
        }
        return der
    }

    private static func asn1Type(_ value: ReceiptValue) throws(TrustError) -> UnsafeMutablePointer<ASN1_TYPE> {
        guard let element = ASN1_TYPE_new() else { throw TrustError(.signingFailed, "allocation failed") }
        switch value {
        case .integer(let number):
            guard let integer = ASN1_INTEGER_new() else { throw TrustError(.signingFailed, "allocation failed") }
            ASN1_INTEGER_set_int64(integer, number)
            ASN1_TYPE_set(element, V_ASN1_INTEGER, UnsafeMutableRawPointer(integer))
        case .string(let text):
            // Dates are IA5String in Apple's receipts; other text is UTF8String. Only text shaped
            // like an RFC 3339 date (`yyyy-MM-ddT…`) is parsed: every other value went to the ICU
            // formatter twice, a quarter of the time the simulator took to sign receipts.
            let isDate = ReceiptDates.hasDateShape(text) && ReceiptDates.parse(text) != nil
            let kind = isDate ? V_ASN1_IA5STRING : V_ASN1_UTF8STRING
            guard let string = ASN1_STRING_type_new(kind) else { throw TrustError(.signingFailed, "allocation failed") }
            let bytes = Array(text.utf8)
            bytes.withUnsafeBufferPointer { _ = ASN1_STRING_set(string, $0.baseAddress, Int32($0.count)) }
            ASN1_TYPE_set(element, kind, UnsafeMutableRawPointer(string))
        case .bytes(let raw):
            guard let string = ASN1_STRING_type_new(V_ASN1_OCTET_STRING) else {
                throw TrustError(.signingFailed, "allocation failed")
            }
            raw.withUnsafeBufferPointer { _ = ASN1_STRING_set(string, $0.baseAddress, Int32($0.count)) }
            ASN1_TYPE_set(element, V_ASN1_OCTET_STRING, UnsafeMutableRawPointer(string))
        }
        return element
    }
}
