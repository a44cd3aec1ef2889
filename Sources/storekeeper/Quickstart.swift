import AppStoreModels
import AppStoreTrust
import Foundation

/// `storekeeper quickstart`: the trust core alone, without a server or database. It creates a
/// CA shaped like Apple's (once, in DIR), signs a transaction and a notification the way the
/// App Store does, verifies both through the same `SignedDataVerifier` production uses, and
/// shows the rule that refuses a tampered copy. (`make run` starts `serve --demo` instead.)
enum Quickstart {
    static let command: Command = Command(
        name: "quickstart", summary: "sign and verify sample payloads end to end with a test CA",
        arguments: [
            Argument(
                name: "DIR", help: "where the test CA and samples go (default: data/quickstart)", isRequired: false)
        ],
        action: { arguments in
            try run(directory: arguments.positional.first ?? "data/quickstart", now: Timestamp(Date()))
            return 0
        })

    static func run(directory: String, now: Timestamp) throws {
        let url = URL(fileURLWithPath: directory)
        let authority: TestCertificateAuthority
        if FileManager.default.fileExists(atPath: url.appendingPathComponent("root.der").path) {
            authority = try TestCertificateAuthority.read(from: url)
            print("using the test CA in \(directory)")
        } else {
            authority = try TestCertificateAuthority.generate(
                name: "Storekeeper Quickstart", validFrom: now.adding(milliseconds: -86_400_000),
                validUntil: now.adding(milliseconds: 3650 * 86_400_000))
            try authority.write(to: url)
            print(
                "created a test CA in \(directory) (root, intermediate with Apple's WWDR OID, leaf with the receipt-signing OID)"
            )
        }
        var transaction = JWSTransactionDecodedPayload()
        transaction.transactionId = "2000000123456789"
        transaction.originalTransactionId = "2000000123456789"
        transaction.bundleId = "com.example.storekeeper"
        transaction.productId = "com.example.storekeeper.monthly"
        transaction.subscriptionGroupIdentifier = "21000001"
        transaction.type = RawEnum(.autoRenewableSubscription)
        transaction.purchaseDate = now
        transaction.originalPurchaseDate = now
        transaction.expiresDate = now.adding(milliseconds: 30 * 86_400_000)
        transaction.signedDate = now
        transaction.environment = RawEnum(.sandbox)
        transaction.inAppOwnershipType = RawEnum(.purchased)
        transaction.transactionReason = RawEnum(.purchase)
        transaction.price = 4990
        transaction.currency = "EUR"
        transaction.quantity = 1
        transaction.storefront = "DEU"
        let signedTransaction = try authority.signer.sign(transaction)

        var notification = ResponseBodyV2DecodedPayload()
        notification.notificationType = RawEnum(.subscribed)
        notification.subtype = RawEnum(.initialBuy)
        notification.notificationUUID = UUID().uuidString.lowercased()
        notification.version = "2.0"
        notification.signedDate = now
        var data = NotificationData()
        data.bundleId = transaction.bundleId
        data.environment = RawEnum(.sandbox)
        data.signedTransactionInfo = signedTransaction
        data.status = RawEnum(.active)
        notification.data = data
        let signedNotification = try authority.signer.sign(notification)
        let tokenURL = url.appendingPathComponent("notification.jws")
        try signedNotification.write(to: tokenURL, atomically: true, encoding: .utf8)

        let verifier = try SignedDataVerifier(
            rootCertificates: [authority.root], bundleId: "com.example.storekeeper", appAppleId: nil,
            environment: .sandbox)
        let verified = try verifier.verifyAndDecodeNotificationContents(signedNotification)
        print("\nverified a SUBSCRIBED/INITIAL_BUY notification signed by \(authority.leaf.subject):")
        print(
            "  chain: \(verified.notification.chain.map { [$0.leaf.subject, $0.intermediate.subject, $0.root.subject].joined(separator: " → ") } ?? "-")"
        )
        print(
            "  transaction \(verified.transaction?.payload.transactionId ?? "?") for \(verified.transaction?.payload.productId ?? "?"), expires \(verified.transaction?.payload.expiresDate.map { "\($0)" } ?? "-")"
        )

        // What a forger does: read the signed payload, extend the expiry, keep header and signature.
        var forged = UnverifiedJWS.payload(signedTransaction, as: JWSTransactionDecodedPayload.self) ?? transaction
        forged.expiresDate = now.adding(milliseconds: 3650 * 86_400_000)
        let tampered = [
            UnverifiedJWS.headerBytes(signedTransaction) ?? [], Array(AppStoreJSON.encode(forged)),
            UnverifiedJWS.signatureBytes(signedTransaction) ?? [],
        ].map { Base64URL.encode($0) }.joined(separator: ".")
        do {
            _ = try verifier.verifyAndDecodeTransaction(tampered)
            print("  tampered copy accepted: this is a bug")
        } catch {
            print("  a copy with a forged expiry is refused: \(error.category.rawValue) [\(error.rule.rawValue)]")
        }
        print(
            """

            try it yourself:
              .build/release/storekeeper verify --root \(directory)/root.der --bundle-id com.example.storekeeper --environment Sandbox \(tokenURL.path)
            and against Apple (download Apple Root CA - G3 from https://www.apple.com/certificateauthority/):
              .build/release/storekeeper verify --root AppleRootCA-G3.cer --bundle-id YOUR.BUNDLE --app-apple-id YOUR_APP_ID --environment Production JWS
            """)
    }
}
