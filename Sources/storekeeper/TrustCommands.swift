import AppStoreModels
import AppStoreTrust
import Foundation

/// `storekeeper verify`, `receipt decode`, `ca init`, `jws sign|verify`, `token`, `offer sign|verify|jws`:
/// their declarations (`commands`) and their work.
enum TrustCommands {
    static func loadRoots(_ paths: [String]) throws -> [Certificate] {
        try paths.map { try Certificate(contentsOf: URL(fileURLWithPath: $0)) }
    }

    static let environments = "Production|Sandbox|Xcode|LocalTesting"

    static let commands: [Command] = [
        Command(
            name: "verify", summary: "verify a signed transaction, renewal info, notification or app transaction",
            arguments: [Argument(name: "JWS", help: "the signed payload", isRequired: false, readsStandardInput: true)],
            options: [
                Option(
                    name: "--root", valueName: "FILE", help: "a trusted root certificate (DER or PEM)",
                    isRepeatable: true),
                Option(name: "--bundle-id", valueName: "ID", help: "the app's bundle ID", isRequired: true),
                Option(name: "--app-apple-id", valueName: "N", help: "the app's Apple ID (required for Production)"),
                Option(name: "--environment", valueName: "ENV", help: environments, defaultValue: "Production"),
                Option(
                    name: "--type", valueName: "TYPE", help: "what the payload is", defaultValue: "auto",
                    choices: ["transaction", "renewal", "notification", "app-transaction", "auto"]),
            ],
            flags: [Flag(name: "--online", help: "also check certificate revocation (OCSP)")],
            action: { try verify($0) }),
        Command(
            name: "receipt", summary: "StoreKit 1 app receipts",
            subcommands: [
                Command(
                    name: "decode", summary: "decode (and with --root verify) an app receipt",
                    arguments: [
                        Argument(
                            name: "FILE", help: "the receipt, DER or base64", isRequired: false,
                            readsStandardInput: true)
                    ],
                    options: [
                        Option(
                            name: "--root", valueName: "FILE",
                            help: "a trusted root certificate; verifies the signature",
                            isRepeatable: true)
                    ],
                    action: { try receiptDecode($0) })
            ]),
        Command(
            name: "ca", summary: "test certificate authorities",
            subcommands: [
                Command(
                    name: "init", summary: "write a test CA shaped like Apple's (root, intermediate, leaf)",
                    arguments: [Argument(name: "DIR", help: "the directory to write to")],
                    options: [
                        Option(
                            name: "--name", valueName: "NAME", help: "the common-name prefix",
                            defaultValue: "Storekeeper Test"),
                        Option(name: "--years", valueName: "N", help: "validity in years", defaultValue: "10"),
                        Option(
                            name: "--root-ocsp-url", valueName: "URL", help: "OCSP responder named by the intermediate"),
                        Option(
                            name: "--intermediate-ocsp-url", valueName: "URL", help: "OCSP responder named by the leaf"),
                    ],
                    action: { try caInit($0, now: Timestamp(Date())) })
            ]),
        Command(
            name: "jws", summary: "sign and verify ES256 JWS",
            subcommands: [
                Command(
                    name: "sign", summary: "sign a JSON payload the way the App Store does (x5c chain)",
                    arguments: [
                        Argument(
                            name: "FILE", help: "the JSON object to sign", isRequired: false, readsStandardInput: true)
                    ],
                    options: [
                        Option(name: "--key", valueName: "KEY", help: "the leaf's private key (PEM)", isRequired: true),
                        Option(
                            name: "--chain", valueName: "LEAF,INTERMEDIATE,ROOT",
                            help: "certificates for the x5c header, comma-separated"),
                        Option(name: "--kid", valueName: "ID", help: "a key ID for the header"),
                    ],
                    action: { try jwsSign($0) }),
                Command(
                    name: "verify", summary: "check an ES256 token against a known public key",
                    arguments: [
                        Argument(name: "JWS", help: "the token", isRequired: false, readsStandardInput: true)
                    ],
                    options: [
                        Option(
                            name: "--public-key", valueName: "PEM", help: "a public (or private) key PEM file",
                            isRequired: true)
                    ],
                    action: { try jwsVerify($0) }),
            ]),
        Command(
            name: "token", summary: "an App Store Server API bearer token",
            options: [
                Option(name: "--key", valueName: "P8", help: "the In-App Purchase key file", isRequired: true),
                Option(name: "--key-id", valueName: "ID", help: "the key's ID", isRequired: true),
                Option(name: "--issuer-id", valueName: "ID", help: "the issuer ID", isRequired: true),
                Option(name: "--bundle-id", valueName: "ID", help: "the app's bundle ID", isRequired: true),
            ],
            action: { try token($0) }),
        Command(
            name: "offer", summary: "promotional offer signatures (v1, and JWS v2)",
            subcommands: [
                Command(
                    name: "sign", summary: "sign a promotional offer (v1 signature)",
                    options: [
                        Option(name: "--key", valueName: "P8", help: "the subscription key file", isRequired: true),
                        Option(name: "--key-id", valueName: "ID", help: "the key's ID", isRequired: true),
                        Option(name: "--bundle-id", valueName: "ID", help: "the app's bundle ID", isRequired: true),
                        Option(name: "--product-id", valueName: "ID", help: "the product", isRequired: true),
                        Option(name: "--offer-id", valueName: "ID", help: "the offer", isRequired: true),
                        Option(name: "--app-account-token", valueName: "UUID", help: "the app account token"),
                        Option(name: "--nonce", valueName: "UUID", help: "a fresh nonce", isRequired: true),
                        Option(name: "--timestamp", valueName: "MS", help: "epoch milliseconds", isRequired: true),
                    ],
                    action: { try offerSign($0) }),
                Command(
                    name: "verify", summary: "check a promotional offer signature (v1)",
                    options: [
                        Option(
                            name: "--public-key", valueName: "PEM", help: "a public (or private) key PEM file",
                            isRequired: true),
                        Option(name: "--key-id", valueName: "ID", help: "the key's ID", isRequired: true),
                        Option(name: "--bundle-id", valueName: "ID", help: "the app's bundle ID", isRequired: true),
                        Option(name: "--product-id", valueName: "ID", help: "the product", isRequired: true),
                        Option(name: "--offer-id", valueName: "ID", help: "the offer", isRequired: true),
                        Option(name: "--app-account-token", valueName: "UUID", help: "the app account token"),
                        Option(name: "--nonce", valueName: "UUID", help: "the nonce", isRequired: true),
                        Option(name: "--timestamp", valueName: "MS", help: "epoch milliseconds", isRequired: true),
                        Option(name: "--signature", valueName: "BASE64", help: "the signature", isRequired: true),
                    ],
                    action: { try offerVerify($0) }),
                Command(
                    name: "jws",
                    summary: "a JWS signature for StoreKit (promotional offer, intro eligibility, Advanced Commerce)",
                    options: [
                        Option(
                            name: "--audience", valueName: "AUDIENCE", help: "what the signature is for",
                            isRequired: true, choices: JWSSignatureCreator.Audience.allCases.map(\.rawValue)),
                        Option(name: "--key", valueName: "P8", help: "the In-App Purchase key file", isRequired: true),
                        Option(name: "--key-id", valueName: "ID", help: "the key's ID", isRequired: true),
                        Option(name: "--issuer-id", valueName: "ID", help: "the issuer ID", isRequired: true),
                        Option(name: "--bundle-id", valueName: "ID", help: "the app's bundle ID", isRequired: true),
                        Option(name: "--product-id", valueName: "ID", help: "the product (offers, eligibility)"),
                        Option(name: "--offer-id", valueName: "ID", help: "the offer (promotional offers)"),
                        Option(name: "--transaction-id", valueName: "ID", help: "the customer's transaction"),
                        Option(
                            name: "--allow-intro", valueName: "BOOL", help: "intro offer eligibility",
                            defaultValue: "true", choices: ["true", "false"]),
                        Option(name: "--request", valueName: "JSON", help: "the Advanced Commerce request"),
                    ],
                    action: { try offerJWS($0, now: Timestamp(Date())) }),
            ]),
    ]

    static func verify(_ arguments: CommandLineArguments) throws -> Int32 {
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
        return 0
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

    static func receiptDecode(_ arguments: CommandLineArguments) throws -> Int32 {
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
        return 0
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

    static func caInit(_ arguments: CommandLineArguments, now: Timestamp) throws -> Int32 {
        let directory = arguments.positional[0]
        guard let years = arguments.value("--years").flatMap({ Int64($0) }), (1...100).contains(years) else {
            throw UsageError("--years must be a number from 1 to 100")
        }
        let start = now.adding(milliseconds: -86_400_000)
        let authority = try TestCertificateAuthority.generate(
            name: arguments.value("--name") ?? "Storekeeper Test", validFrom: start,
            validUntil: start.adding(milliseconds: years * 365 * 86_400_000),
            rootOCSPURL: arguments.value("--root-ocsp-url"),
            intermediateOCSPURL: arguments.value("--intermediate-ocsp-url"))
        try authority.write(to: URL(fileURLWithPath: directory))
        print("wrote root, intermediate and leaf (.der, .pem, .key.pem) to \(directory)")
        print("root SHA-256: \(Digest.hex(authority.root.sha256Fingerprint))")
        return 0
    }

    static func jwsSign(_ arguments: CommandLineArguments) throws -> Int32 {
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
        return 0
    }

    /// Verifies an ES256 token with a known public key (API JWTs, signature-creator JWS) and
    /// prints header and claims.
    static func jwsVerify(_ arguments: CommandLineArguments) throws -> Int32 {
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
        return 0
    }

    static func token(_ arguments: CommandLineArguments) throws -> Int32 {
        let signer = try AppStoreConnectTokenSigner(
            key: PrivateKey(contentsOf: URL(fileURLWithPath: try arguments.require("--key"))),
            keyId: try arguments.require("--key-id"), issuerId: try arguments.require("--issuer-id"),
            bundleId: try arguments.require("--bundle-id"))
        print(try signer.token())
        return 0
    }

    static func offerSign(_ arguments: CommandLineArguments) throws -> Int32 {
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
        return 0
    }

    static func offerVerify(_ arguments: CommandLineArguments) throws -> Int32 {
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
        return 0
    }

    static func offerJWS(_ arguments: CommandLineArguments, now: Timestamp) throws -> Int32 {
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
                    allowIntroductoryOffer: arguments.value("--allow-intro") == "true",
                    transactionId: try arguments.require("--transaction-id"), now: now))
        case .advancedCommerce:
            print(try creator.advancedCommerce(requestJSON: Array(try arguments.require("--request").utf8), now: now))
        }
        return 0
    }
}
