import Foundation

/// A promotional-offer retention message: the message and the signed offer, either as a V2
/// compact JWS or as the V1 signature parts.
/// - Note: Immutable value; `Sendable`.
public struct PromotionalOffer: Sendable, Hashable, Codable {
    public var messageIdentifier: UUID?
    public var promotionalOfferSignatureV2: String?
    public var promotionalOfferSignatureV1: PromotionalOfferSignatureV1?

    public init(
        messageIdentifier: UUID? = nil, promotionalOfferSignatureV2: String? = nil,
        promotionalOfferSignatureV1: PromotionalOfferSignatureV1? = nil
    ) {
        self.messageIdentifier = messageIdentifier
        self.promotionalOfferSignatureV2 = promotionalOfferSignatureV2
        self.promotionalOfferSignatureV1 = promotionalOfferSignatureV1
    }
}
