import AppStoreModels
import COpenSSL
import Foundation

/// Describes one certificate to issue with OpenSSL: for test hierarchies, the simulator's CA
/// and the negative tests that need a chain broken in exactly one way.
public struct CertificateRequest: Sendable {
    public var commonName: String
    public var organization: String
    public var serial: Int64
    public var notBefore: Timestamp
    public var notAfter: Timestamp
    public var isCertificateAuthority: Bool
    /// Dotted OIDs added as non-critical extensions with an ASN.1 NULL value, as Apple does.
    public var markerOIDs: [String]
    public var ocspURL: String?

    public init(
        commonName: String, organization: String = "Storekeeper Test", serial: Int64,
        notBefore: Timestamp, notAfter: Timestamp, isCertificateAuthority: Bool,
        markerOIDs: [String] = [], ocspURL: String? = nil
    ) {
        self.commonName = commonName
        self.organization = organization
        self.serial = serial
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.isCertificateAuthority = isCertificateAuthority
        self.markerOIDs = markerOIDs
        self.ocspURL = ocspURL
    }

    /// Issues the certificate for `subjectKey`, signed by `issuer` (nil = self-signed).
    public func issue(subjectKey: PrivateKey, issuer: (certificate: Certificate, key: PrivateKey)?) throws(TrustError)
        -> Certificate
    {
        guard let x509 = X509_new() else { throw TrustError(.signingFailed, "OpenSSL allocation failed") }
        defer { X509_free(x509) }
        guard let name = X509_NAME_new() else { throw TrustError(.signingFailed, "OpenSSL allocation failed") }
        defer { X509_NAME_free(name) }
        let asciiMultibyte = Int32(MBSTRING_ASC)
        X509_NAME_add_entry_by_txt(name, "O", asciiMultibyte, organization, -1, -1, 0)
        X509_NAME_add_entry_by_txt(name, "CN", asciiMultibyte, commonName, -1, -1, 0)
        X509_set_version(x509, 2)
        ASN1_INTEGER_set_int64(X509_get_serialNumber(x509), serial)
        ASN1_TIME_set(X509_getm_notBefore(x509), time_t(notBefore.secondsSince1970))
        ASN1_TIME_set(X509_getm_notAfter(x509), time_t(notAfter.secondsSince1970))
        X509_set_subject_name(x509, name)
        X509_set_issuer_name(x509, issuer.map { X509_get_subject_name($0.certificate.handle) } ?? name)
        X509_set_pubkey(x509, subjectKey.handle)

        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer?.certificate.handle ?? x509, x509, nil, nil, 0)
        COpenSSL_X509V3_set_ctx_nodb(&context)
        var extensions: [(String, String)] = [
            (
                "basicConstraints",
                isCertificateAuthority ? "critical,CA:TRUE,pathlen:\(issuer == nil ? 1 : 0)" : "critical,CA:FALSE"
            ),
            ("keyUsage", isCertificateAuthority ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature"),
            ("subjectKeyIdentifier", "hash"),
        ]
        if issuer != nil { extensions.append(("authorityKeyIdentifier", "keyid:always")) }
        if let ocspURL { extensions.append(("authorityInfoAccess", "OCSP;URI:\(ocspURL)")) }
        extensions += markerOIDs.map { ($0, "ASN1:NULL") }
        for (extensionName, value) in extensions {
            guard let ext = X509V3_EXT_nconf(nil, &context, extensionName, value) else {
                throw TrustError(.signingFailed, "cannot build extension \(extensionName): \(OpenSSLFailure.drain())")
            }
            X509_add_ext(x509, ext, -1)
            X509_EXTENSION_free(ext)
        }
        guard X509_sign(x509, (issuer?.key ?? subjectKey).handle, EVP_sha256()) > 0,
            let der = derEncode({ i2d_X509(x509, $0) })
        else {
            throw TrustError(.signingFailed, "certificate signing failed: \(OpenSSLFailure.drain())")
        }
        return try Certificate(der: der)
    }
}

/// A three-level hierarchy shaped like Apple's: root → intermediate with the WWDR marker
/// (1.2.840.113635.100.6.2.1) → leaf with the receipt-signing marker
/// (1.2.840.113635.100.6.11.1), all P-256. Used by the simulator, tests and `storekeeper ca init`.
/// - Note: Immutable; `Sendable`.
public struct TestCertificateAuthority: Sendable {
    public let root: Certificate
    public let rootKey: PrivateKey
    public let intermediate: Certificate
    public let intermediateKey: PrivateKey
    public let leaf: Certificate
    public let leafKey: PrivateKey

    /// Signs App Store–shaped JWS with `x5c` = [leaf, intermediate, root].
    public var signer: JWSSigner { JWSSigner(key: leafKey, chain: [leaf, intermediate, root]) }

    /// - Parameters:
    ///   - validFrom/validUntil: validity of all three certificates.
    ///   - rootOCSPURL: responder named in the intermediate (checked against the root).
    ///   - intermediateOCSPURL: responder named in the leaf (checked against the intermediate).
    public static func generate(
        name: String = "Storekeeper Test", validFrom: Timestamp, validUntil: Timestamp,
        rootOCSPURL: String? = nil, intermediateOCSPURL: String? = nil
    ) throws(TrustError) -> TestCertificateAuthority {
        let rootKey = try PrivateKey.generateP256()
        let intermediateKey = try PrivateKey.generateP256()
        let leafKey = try PrivateKey.generateP256()
        let root = try CertificateRequest(
            commonName: "\(name) Root CA", organization: name, serial: 1, notBefore: validFrom, notAfter: validUntil,
            isCertificateAuthority: true
        ).issue(subjectKey: rootKey, issuer: nil)
        let intermediate = try CertificateRequest(
            commonName: "\(name) WWDR Intermediate", organization: name, serial: 2, notBefore: validFrom,
            notAfter: validUntil, isCertificateAuthority: true, markerOIDs: [AppleOIDs.wwdrIntermediate],
            ocspURL: rootOCSPURL
        ).issue(subjectKey: intermediateKey, issuer: (root, rootKey))
        let leaf = try CertificateRequest(
            commonName: "\(name) Receipt Signing", organization: name, serial: 3, notBefore: validFrom,
            notAfter: validUntil, isCertificateAuthority: false, markerOIDs: [AppleOIDs.receiptSigningLeaf],
            ocspURL: intermediateOCSPURL
        ).issue(subjectKey: leafKey, issuer: (intermediate, intermediateKey))
        return TestCertificateAuthority(
            root: root, rootKey: rootKey, intermediate: intermediate, intermediateKey: intermediateKey,
            leaf: leaf, leafKey: leafKey)
    }

    public init(
        root: Certificate, rootKey: PrivateKey, intermediate: Certificate, intermediateKey: PrivateKey,
        leaf: Certificate, leafKey: PrivateKey
    ) {
        self.root = root
        self.rootKey = rootKey
        self.intermediate = intermediate
        self.intermediateKey = intermediateKey
        self.leaf = leaf
        self.leafKey = leafKey
    }

    public static let fileNames = ["root", "intermediate", "leaf"]

    /// Writes `NAME.der`, `NAME.pem` and `NAME.key.pem` (PKCS#8) for root, intermediate, leaf.
    public func write(to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, certificate, key) in [
            ("root", root, rootKey), ("intermediate", intermediate, intermediateKey), ("leaf", leaf, leafKey),
        ] {
            try Data(certificate.der).write(to: directory.appendingPathComponent("\(name).der"))
            try certificate.pem.write(
                to: directory.appendingPathComponent("\(name).pem"), atomically: true, encoding: .utf8)
            let keyURL = directory.appendingPathComponent("\(name).key.pem")
            try key.pkcs8PEM.write(to: keyURL, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyURL.path)
        }
    }

    /// Reads a hierarchy written by `write(to:)`.
    public static func read(from directory: URL) throws -> TestCertificateAuthority {
        func load(_ name: String) throws -> (Certificate, PrivateKey) {
            (
                try Certificate(contentsOf: directory.appendingPathComponent("\(name).der")),
                try PrivateKey(contentsOf: directory.appendingPathComponent("\(name).key.pem"))
            )
        }
        let (root, rootKey) = try load("root")
        let (intermediate, intermediateKey) = try load("intermediate")
        let (leaf, leafKey) = try load("leaf")
        return TestCertificateAuthority(
            root: root, rootKey: rootKey, intermediate: intermediate, intermediateKey: intermediateKey,
            leaf: leaf, leafKey: leafKey)
    }
}
