import Foundation

/// Promotional offer signatures, version 1 (StoreKit 1 `SKPaymentDiscount`, StoreKit 2
/// `Product.PurchaseOption.promotionalOffer(offerID:keyID:nonce:signature:timestamp:)`).
///
/// Signs `bundleId ⁣ keyId ⁣ productId ⁣ offerId ⁣ appAccountToken ⁣ nonce ⁣ timestamp`
/// joined with U+2063 INVISIBLE SEPARATOR (token and nonce lower-cased) with ECDSA P-256
/// SHA-256, returning base64 DER as Apple expects.
/// - Note: Immutable; `Sendable`.
public struct PromotionalOfferSignature: Sendable {
    public let key: PrivateKey
    public let keyId: String
    public let bundleId: String

    public init(key: PrivateKey, keyId: String, bundleId: String) {
        self.key = key
        self.keyId = keyId
        self.bundleId = bundleId
    }

    public static func message(
        bundleId: String, keyId: String, productId: String, offerId: String,
        appAccountToken: String, nonce: UUID, timestamp: Int64
    ) -> String {
        [
            bundleId, keyId, productId, offerId, appAccountToken.lowercased(), nonce.uuidString.lowercased(),
            String(timestamp),
        ]
        .joined(separator: "\u{2063}")
    }

    public func sign(productId: String, offerId: String, appAccountToken: String, nonce: UUID, timestamp: Int64)
        throws(TrustError) -> String
    {
        let text = Self.message(
            bundleId: bundleId, keyId: keyId, productId: productId, offerId: offerId,
            appAccountToken: appAccountToken, nonce: nonce, timestamp: timestamp)
        return Data(try key.signDER(Array(text.utf8))).base64EncodedString()
    }

    /// Checks a signature made by Apple's library or ours with the key's public half.
    public static func verify(
        signature: String, publicKey: PublicKey, bundleId: String, keyId: String, productId: String,
        offerId: String, appAccountToken: String, nonce: UUID, timestamp: Int64
    ) -> Bool {
        guard let der = Data(base64Encoded: signature) else { return false }
        let text = message(
            bundleId: bundleId, keyId: keyId, productId: productId, offerId: offerId,
            appAccountToken: appAccountToken, nonce: nonce, timestamp: timestamp)
        return publicKey.verify(derSignature: [UInt8](der), message: Array(text.utf8))
    }
}
