import AppStoreModels
import AppStoreTrust
import Foundation

/// `storekeeper verify`, `receipt decode`, `ca init`, `jws sign|verify`, `token`, `offer …`.
enum TrustCommands {
    static func loadRoots(_ paths: [String]) throws -> [Certificate] {
        try paths.map { try Certificate(contentsOf: URL(fileURLWithPath: $0)) }
    }

    static let verifyUsage = """
        usage: storekeeper verify [--root FILE]... --bundle-id ID [--app-apple-id N]
                                  [--environment Production|Sandbox|Xcode|LocalTesting] [--online]
                                  [--type transaction|renewal|notification|app-transaction|auto] [JWS|-]
        """

    static func verify(_ arguments: CommandLineArguments) throws {
        try arguments.allowOnly(["--root", "--bundle-id", "--app-apple-id", "--environment", "--type"])
        let environmentName = arguments.value("--environment") ?? "Production"
        guard let environment = AppStoreEnvironment(rawValue: environmentName) else {
            throw UsageError("unknown environment \(environmentName)")
        }
        var appAppleId: Int64?
        if let text = arguments.value("--app-apple-id") {
            guard let number = Int64(text) else { throw UsageError("--app-apple-id must be a number") }
            appAppleId = number
        }
        let token = try Input.text(arguments.positional.first)
        let type = arguments.value("--type") ?? "auto"
        let resolved = type == "auto" ? detectType(token) : type
        let roots = try loadRoots(arguments.values("--root"))
        if environment.isSigned, roots.isEmpty {
            throw UsageError(
                "--root is required for \(environment.rawValue): download Apple Root CA - G3 from Apple PKI")
        }
        warnAboutUnknownRoots(roots)
        let verifier = try SignedDataVerifier(
            rootCertificates: roots, bundleId: try arguments.require("--bundle-id"),
            appAppleId: appAppleId, environment: environment, enableOnlineChecks: arguments.has("--online"))
        switch resolved {
        case "transaction": print(Output.json(try verifier.verifyAndDecodeTransaction(token).payload))
        case "renewal": print(Output.json(try verifier.verifyAndDecodeRenewalInfo(token).payload))
        case "app-transaction": print(Output.json(try verifier.verifyAndDecodeAppTransaction(token).payload))
        case "notification":
            let verified = try verifier.verifyAndDecodeNotificationContents(token)
            print(
                Output.json(
                    DecodedNotification(
                        notification: verified.notification.payload, transactionInfo: verified.transaction?.payload,
                        renewalInfo: verified.renewalInfo?.payload, appTransactionInfo: verified.appTransaction?.payload
                    )))
        default: throw UsageError("unknown --type \(resolved)")
        }
    }

    static func warnAboutUnknownRoots(_ roots: [Certificate]) {
        for root in roots
        where root.subject.contains("Apple Root CA - G3")
            && Digest.hex(root.sha256Fingerprint) != AppleOIDs.appleRootCAG3SHA256
        {
            FileHandle.standardError.write(
                Data(
                    "warning: \(root.subject) does not have Apple Root CA - G3's SHA-256 fingerprint; is this the file from Apple PKI?\n"
                        .utf8))
        }
    }

    /// Guesses the payload type from its (unverified) keys; verification then decides trust.
    static func detectType(_ token: String) -> String {
        guard let object = UnverifiedJWS.payload(token, as: [String: JSONValue].self) else { return "transaction" }
        if object["notificationType"] != nil { return "notification" }
        if object["receiptType"] != nil { return "app-transaction" }
        if object["transactionId"] == nil, object["autoRenewStatus"] != nil || object["renewalDate"] != nil {
            return "renewal"
        }
        return "transaction"
    }

    struct DecodedNotification: Encodable {
        let notification: ResponseBodyV2DecodedPayload
        let transactionInfo: JWSTransactionDecodedPayload?
        let renewalInfo: JWSRenewalInfoDecodedPayload?
        let appTransactionInfo: AppTransaction?
    }

    static func receiptDecode(_ arguments: CommandLineArguments) throws {
        try arguments.allowOnly(["--root"])
        let receipt = try AppReceipt(base64OrDER: [UInt8](Input.read(arguments.positional.first)))
        let roots = try loadRoots(arguments.values("--root"))
        var signature: SignatureReport?
        var failure: TrustError?
        if !roots.isEmpty {
            do {
                let check = try receipt.verifySignature(roots: roots)
                signature = SignatureReport(
                    valid: true, signerChain: check.signerChain, validatedAt: check.validatedAt, error: nil)
            } catch {
                signature = SignatureReport(valid: false, signerChain: nil, validatedAt: nil, error: error.description)
                failure = error
            }
        }
        print(
            Output.json(
                ReceiptReport(
                    receiptType: receipt.receiptType, appItemId: receipt.appItemId, bundleId: receipt.bundleId,
                    applicationVersion: receipt.applicationVersion,
                    opaqueValue: receipt.opaqueValue.map { Data($0).base64EncodedString() },
                    sha1Hash: receipt.sha1Hash.map { Digest.hex($0) }, receiptCreationDate: receipt.receiptCreationDate,
                    originalPurchaseDate: receipt.originalPurchaseDate,
                    originalApplicationVersion: receipt.originalApplicationVersion,
                    expirationDate: receipt.expirationDate, inApp: receipt.inAppPurchases,
                    transactionIds: receipt.transactionIds,
                    signature: signature)))
        if let failure { throw failure }
    }

    struct SignatureReport: Encodable {
        let valid: Bool
        let signerChain: [String]?
        let validatedAt: Timestamp?
        let error: String?
    }

    struct ReceiptReport: Encodable {
        let receiptType: String?
        let appItemId: Int64?
        let bundleId: String?
        let applicationVersion: String?
        let opaqueValue: String?
        let sha1Hash: String?
        let receiptCreationDate: Timestamp?
        let originalPurchaseDate: Timestamp?
        let originalApplicationVersion: String?
        let expirationDate: Timestamp?
        let inApp: [AppReceiptInAppPurchase]
        let transactionIds: [String]
        let signature: SignatureReport?
    }

    static func caInit(_ arguments: CommandLineArguments, now: Timestamp) throws {
        try arguments.allowOnly(["--name", "--years", "--root-ocsp-url", "--intermediate-ocsp-url"])
        guard let directory = arguments.positional.first else { throw UsageError("usage: storekeeper ca init DIR") }
        let years = Int64(arguments.value("--years") ?? "10") ?? 10
        let start = now.adding(milliseconds: -86_400_000)
        let authority = try TestCertificateAuthority.generate(
            name: arguments.value("--name") ?? "Storekeeper Test", validFrom: start,
            validUntil: start.adding(milliseconds: years * 365 * 86_400_000),
            rootOCSPURL: arguments.value("--root-ocsp-url"),
            intermediateOCSPURL: arguments.value("--intermediate-ocsp-url"))
        try authority.write(to: URL(fileURLWithPath: directory))
        print("wrote root, intermediate and leaf (.der, .pem, .key.pem) to \(directory)")
        print("root SHA-256: \(Digest.hex(authority.root.sha256Fingerprint))")
    }

    static func jwsSign(_ arguments: CommandLineArguments) throws {
        try arguments.allowOnly(["--key", "--chain", "--kid"])
        let key = try PrivateKey(contentsOf: URL(fileURLWithPath: try arguments.require("--key")))
        let chain = try (arguments.value("--chain") ?? "").split(separator: ",").map {
            try Certificate(contentsOf: URL(fileURLWithPath: String($0)))
        }
        let payload = try Input.read(arguments.positional.first)
        guard (try? JSONSerialization.jsonObject(with: payload)) is [String: Any] else {
            throw UsageError("payload must be a JSON object")
        }
        var header = ["typ": "JWT"]
        if let kid = arguments.value("--kid") { header["kid"] = kid }
        print(try JWSSigner(key: key, chain: chain).sign(payload: [UInt8](payload), header: header))
    }

    /// Verifies an ES256 token with a known public key (API JWTs, signature-creator JWS) and
    /// prints header and claims.
    static func jwsVerify(_ arguments: CommandLineArguments) throws {
        try arguments.allowOnly(["--public-key"])
        let pem = try Input.text(try arguments.require("--public-key"))
        let key: PublicKey
        if pem.contains("PRIVATE KEY") {
            key = try PrivateKey(pem: pem).publicKey
        } else {
            key = try PublicKey(pem: pem)
        }
        let token = try Input.text(arguments.positional.first)
        let verified = try PublicKeyJWSVerifier(publicKey: key).verify(token)
        print(
            "{\"header\":\(String(decoding: verified.headerJSON, as: UTF8.self)),\"payload\":\(String(decoding: verified.payloadJSON, as: UTF8.self))}"
        )
    }

    static func token(_ arguments: CommandLineArguments) throws {
        try arguments.allowOnly(["--key", "--key-id", "--issuer-id", "--bundle-id"])
        let signer = try AppStoreConnectTokenSigner(
            key: PrivateKey(contentsOf: URL(fileURLWithPath: try arguments.require("--key"))),
            keyId: try arguments.require("--key-id"), issuerId: try arguments.require("--issuer-id"),
            bundleId: try arguments.require("--bundle-id"))
        print(try signer.token())
    }

    static func offer(_ arguments: CommandLineArguments, now: Timestamp) throws {
        guard let action = arguments.positional.first else {
            throw UsageError("usage: storekeeper offer sign|verify|jws …")
        }
        switch action {
        case "sign":
            try arguments.allowOnly([
                "--key", "--key-id", "--bundle-id", "--product-id", "--offer-id", "--app-account-token", "--nonce",
                "--timestamp",
            ])
            let creator = PromotionalOfferSignature(
                key: try PrivateKey(contentsOf: URL(fileURLWithPath: try arguments.require("--key"))),
                keyId: try arguments.require("--key-id"), bundleId: try arguments.require("--bundle-id"))
            guard let nonce = UUID(uuidString: try arguments.require("--nonce")),
                let timestamp = Int64(try arguments.require("--timestamp"))
            else { throw UsageError("--nonce must be a UUID and --timestamp milliseconds") }
            print(
                try creator.sign(
                    productId: try arguments.require("--product-id"), offerId: try arguments.require("--offer-id"),
                    appAccountToken: arguments.value("--app-account-token") ?? "", nonce: nonce, timestamp: timestamp))
        case "verify":
            try arguments.allowOnly([
                "--public-key", "--key-id", "--bundle-id", "--product-id", "--offer-id", "--app-account-token",
                "--nonce", "--timestamp", "--signature",
            ])
            let pem = try Input.text(try arguments.require("--public-key"))
            let key = pem.contains("PRIVATE KEY") ? try PrivateKey(pem: pem).publicKey : try PublicKey(pem: pem)
            guard let nonce = UUID(uuidString: try arguments.require("--nonce")),
                let timestamp = Int64(try arguments.require("--timestamp"))
            else { throw UsageError("--nonce must be a UUID and --timestamp milliseconds") }
            let valid = PromotionalOfferSignature.verify(
                signature: try arguments.require("--signature"), publicKey: key,
                bundleId: try arguments.require("--bundle-id"),
                keyId: try arguments.require("--key-id"), productId: try arguments.require("--product-id"),
                offerId: try arguments.require("--offer-id"),
                appAccountToken: arguments.value("--app-account-token") ?? "",
                nonce: nonce, timestamp: timestamp)
            guard valid else { throw TrustError(.signatureInvalid, "promotional offer signature does not verify") }
            print("valid")
        case "jws":
            try arguments.allowOnly([
                "--audience", "--key", "--key-id", "--issuer-id", "--bundle-id", "--product-id", "--offer-id",
                "--transaction-id", "--allow-intro", "--request",
            ])
            guard let audience = JWSSignatureCreator.Audience(rawValue: try arguments.require("--audience")) else {
                throw UsageError("--audience must be one of \(JWSSignatureCreator.Audience.allCases.map(\.rawValue))")
            }
            let creator = JWSSignatureCreator(
                audience: audience,
                key: try PrivateKey(contentsOf: URL(fileURLWithPath: try arguments.require("--key"))),
                keyId: try arguments.require("--key-id"), issuerId: try arguments.require("--issuer-id"),
                bundleId: try arguments.require("--bundle-id"))
            switch audience {
            case .promotionalOffer:
                print(
                    try creator.promotionalOffer(
                        productId: try arguments.require("--product-id"),
                        offerIdentifier: try arguments.require("--offer-id"),
                        transactionId: arguments.value("--transaction-id"), now: now))
            case .introductoryOfferEligibility:
                print(
                    try creator.introductoryOfferEligibility(
                        productId: try arguments.require("--product-id"),
                        allowIntroductoryOffer: (arguments.value("--allow-intro") ?? "true") == "true",
                        transactionId: try arguments.require("--transaction-id"), now: now))
            case .advancedCommerce:
                print(
                    try creator.advancedCommerce(requestJSON: Array(try arguments.require("--request").utf8), now: now))
            }
        default:
            throw UsageError("unknown offer action \(action)")
        }
    }
}
