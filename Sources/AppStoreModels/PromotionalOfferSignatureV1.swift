import Foundation

/// The parts of a V1 (StoreKit 1 style) promotional-offer signature.
/// - Note: Immutable value; `Sendable`.
public struct PromotionalOfferSignatureV1: Sendable, Hashable, Codable {
    /// Base64 of the ECDSA signature over the offer parameters.
    public var encodedSignature: String?
    public var productId: String?
    public var nonce: UUID?
    /// When the signature was made, in milliseconds since 1970.
    public var timestamp: Int64?
    public var keyId: String?
    public var offerIdentifier: String?
    public var appAccountToken: UUID?

    public init(
        encodedSignature: String? = nil, productId: String? = nil, nonce: UUID? = nil,
        timestamp: Int64? = nil,
        keyId: String? = nil, offerIdentifier: String? = nil, appAccountToken: UUID? = nil
    ) {
        self.encodedSignature = encodedSignature
        self.productId = productId
        self.nonce = nonce
        self.timestamp = timestamp
        self.keyId = keyId
        self.offerIdentifier = offerIdentifier
        self.appAccountToken = appAccountToken
    }
}
