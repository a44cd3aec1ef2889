import AppStoreModels
import COpenSSL
import Foundation

/// An X.509 certificate parsed by OpenSSL from DER.
///
/// - Note: Immutable after parsing; OpenSSL 3 guards the lazily cached extension data of an
///   `X509` with its own lock, so sharing across threads is safe (`@unchecked Sendable`).
public final class Certificate: @unchecked Sendable, Hashable, CustomStringConvertible {
    let handle: OpaquePointer
    /// The DER bytes exactly as received.
    public let der: [UInt8]

    /// Largest certificate accepted: Apple's are about 1 KiB; this bounds parser work.
    public static let maximumDERSize = 16 * 1024

    public init(der: [UInt8]) throws(TrustError) {
        guard !der.isEmpty, der.count <= Self.maximumDERSize else {
            throw TrustError(
                .certificateMalformed, "certificate of \(der.count) bytes is outside 1…\(Self.maximumDERSize)")
        }
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let x509 = d2i_X509(nil, &cursor, buffer.count)
            // Trailing bytes after the certificate mean this is not one DER certificate.
            if let x509, cursor != buffer.baseAddress! + buffer.count {
                X509_free(x509)
                return nil
            }
            return x509
        }
        guard let parsed else {
            OpenSSLFailure.clear()
            throw TrustError(.certificateMalformed, "not a DER X.509 certificate")
        }
        handle = parsed
        self.der = der
    }

    /// Reads a DER file or a PEM file holding one certificate.
    public convenience init(contentsOf url: URL) throws(TrustError) {
        let bytes: [UInt8]
        do { bytes = [UInt8](try Data(contentsOf: url)) } catch {
            throw TrustError(.certificateMalformed, "cannot read certificate file \(url.path)")
        }
        try self.init(derOrPEM: bytes)
    }

    public convenience init(derOrPEM bytes: [UInt8]) throws(TrustError) {
        if let text = String(bytes: bytes, encoding: .utf8), text.contains("-----BEGIN CERTIFICATE-----") {
            guard let der = PEM.decode(text, label: "CERTIFICATE") else {
                throw TrustError(.certificateMalformed, "PEM certificate is not valid base64")
            }
            try self.init(der: der)
        } else {
            try self.init(der: bytes)
        }
    }

    deinit { X509_free(handle) }

    public static func == (lhs: Certificate, rhs: Certificate) -> Bool { lhs.der == rhs.der }
    public func hash(into hasher: inout Hasher) { hasher.combine(der) }

    public var sha256Fingerprint: [UInt8] { Digest.sha256(der) }

    public var subject: String { Self.name(X509_get_subject_name(handle)) }
    public var issuer: String { Self.name(X509_get_issuer_name(handle)) }
    public var description: String { subject }

    public var serialNumberHex: String {
        guard let serial = X509_get0_serialNumber(handle), let bn = ASN1_INTEGER_to_BN(serial, nil) else { return "" }
        defer { BN_free(bn) }
        guard let hex = BN_bn2hex(bn) else { return "" }
        defer { COpenSSL_free(hex) }
        return String(cString: hex)
    }

    public var notBefore: Timestamp? { Self.timestamp(X509_get0_notBefore(handle)) }
    public var notAfter: Timestamp? { Self.timestamp(X509_get0_notAfter(handle)) }

    /// Whether the certificate carries an extension with this dotted OID.
    public func hasExtension(oid: String) -> Bool {
        guard let object = OBJ_txt2obj(oid, 1) else { return false }
        defer { ASN1_OBJECT_free(object) }
        return X509_get_ext_by_OBJ(handle, object, -1) >= 0
    }

    public var isSelfSigned: Bool { X509_check_issued(handle, handle) == X509_V_OK }

    /// The subject public key; nil when OpenSSL cannot read it.
    public var publicKey: PublicKey? {
        guard let key = X509_get_pubkey(handle) else { return nil }
        return PublicKey(owning: key)
    }

    /// OCSP responder URLs from the Authority Information Access extension.
    public var ocspURLs: [String] {
        guard let stack = X509_get1_ocsp(handle) else { return [] }
        defer { X509_email_free(stack) }
        return (0..<OPENSSL_sk_num(stack)).compactMap { index in
            OPENSSL_sk_value(stack, index).map { String(cString: $0.assumingMemoryBound(to: CChar.self)) }
        }
    }

    public var pem: String { PEM.encode(der, label: "CERTIFICATE") }

    static func name(_ name: OpaquePointer?) -> String {
        guard let name, let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        X509_NAME_print_ex(bio, name, 0, COpenSSL_XN_FLAG_RFC2253())
        return String(decoding: memoryBIOContents(bio), as: UTF8.self)
    }

    static func timestamp(_ time: UnsafePointer<ASN1_TIME>?) -> Timestamp? {
        guard let time else { return nil }
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else { return nil }
        return Timestamp(millisecondsSince1970: Int64(timegm(&parts)) * 1000)
    }
}

/// PEM armour (RFC 7468) for DER bytes.
public enum PEM {
    public static func encode(_ der: [UInt8], label: String) -> String {
        let body = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN \(label)-----\n\(body)\n-----END \(label)-----\n"
    }

    public static func decode(_ text: String, label: String) -> [UInt8]? {
        guard let start = text.range(of: "-----BEGIN \(label)-----"),
            let end = text.range(of: "-----END \(label)-----", range: start.upperBound..<text.endIndex)
        else { return nil }
        let body = text[start.upperBound..<end.lowerBound].filter { !$0.isWhitespace }
        return Data(base64Encoded: String(body)).map { [UInt8]($0) }
    }
}
