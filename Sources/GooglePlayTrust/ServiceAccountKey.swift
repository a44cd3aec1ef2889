import Foundation

/// A Google Cloud service-account key file (JSON, as the console downloads it): the account's
/// email, its RSA private key and the token endpoint that exchanges signed assertions for
/// access tokens.
///
/// Parsing names the field that is missing or wrong; no description ever includes the key.
/// - Note: Immutable; `Sendable`.
public struct ServiceAccountKey: Sendable, CustomStringConvertible {
    /// Google's token endpoint, the default `token_uri`.
    public static let googleTokenURI = URL(string: "https://oauth2.googleapis.com/token")!
    /// A key file is about 2.3 KiB.
    public static let maximumBytes = 64 * 1024

    public let clientEmail: String
    public let privateKeyId: String
    public let privateKey: RSAPrivateKey
    public let tokenURI: URL
    public let projectId: String?
    public let clientId: String?

    public init(
        clientEmail: String, privateKeyId: String, privateKey: RSAPrivateKey, tokenURI: URL = googleTokenURI,
        projectId: String? = nil, clientId: String? = nil
    ) {
        self.clientEmail = clientEmail
        self.privateKeyId = privateKeyId
        self.privateKey = privateKey
        self.tokenURI = tokenURI
        self.projectId = projectId
        self.clientId = clientId
    }

    /// Reads the key file's JSON; refuses `type` other than `service_account`, a missing field,
    /// a `token_uri` that is not http(s), and a private key that is not RSA.
    public init(json: Data) throws(GooglePlayTrustError) {
        guard json.count <= Self.maximumBytes else {
            throw GooglePlayTrustError(.serviceAccountMalformed, "service-account key file is too large")
        }
        let file: ServiceAccountKeyFile
        do {
            file = try JSONDecoder().decode(ServiceAccountKeyFile.self, from: json)
        } catch {
            throw GooglePlayTrustError(.serviceAccountMalformed, "service-account key file is not a JSON object")
        }
        guard file.type == "service_account" else {
            throw GooglePlayTrustError(.serviceAccountMalformed, "key file 'type' is not service_account")
        }
        func required(_ value: String?, _ name: String) throws(GooglePlayTrustError) -> String {
            guard let value, !value.isEmpty else {
                throw GooglePlayTrustError(.serviceAccountMalformed, "key file has no '\(name)'")
            }
            return value
        }
        let email = try required(file.clientEmail, "client_email")
        let keyId = try required(file.privateKeyId, "private_key_id")
        let pem = try required(file.privateKey, "private_key")
        let tokenURIText = try required(file.tokenURI, "token_uri")
        guard let tokenURI = URL(string: tokenURIText), ["https", "http"].contains(tokenURI.scheme ?? ""),
            tokenURI.host != nil
        else {
            throw GooglePlayTrustError(.serviceAccountMalformed, "key file 'token_uri' is not an http(s) URL")
        }
        let key: RSAPrivateKey
        do {
            key = try RSAPrivateKey(pem: pem)
        } catch {
            throw GooglePlayTrustError(error.rule, "key file 'private_key': \(error.detail)")
        }
        self.init(
            clientEmail: email, privateKeyId: keyId, privateKey: key, tokenURI: tokenURI, projectId: file.projectId,
            clientId: file.clientId)
    }

    /// The key file's JSON (what a test or the simulator hands to Google's client libraries).
    public var json: Data {
        let file = ServiceAccountKeyFile(
            type: "service_account", projectId: projectId, privateKeyId: privateKeyId,
            privateKey: privateKey.pkcs8PEM, clientEmail: clientEmail, clientId: clientId,
            tokenURI: tokenURI.absoluteString)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings only: encoding cannot fail.
        return try! encoder.encode(file)
    }

    public var description: String { "ServiceAccountKey(\(clientEmail), key id \(privateKeyId))" }
}

/// The key file's fields; the JSON names are Google's.
struct ServiceAccountKeyFile: Codable {
    var type: String?
    var projectId: String?
    var privateKeyId: String?
    var privateKey: String?
    var clientEmail: String?
    var clientId: String?
    var tokenURI: String?

    enum CodingKeys: String, CodingKey {
        case type
        case projectId = "project_id"
        case privateKeyId = "private_key_id"
        case privateKey = "private_key"
        case clientEmail = "client_email"
        case clientId = "client_id"
        case tokenURI = "token_uri"
    }
}
