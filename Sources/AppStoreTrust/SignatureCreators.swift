import AppStoreModels
import Foundation

/// The JWS an app passes to StoreKit for signed App Store requests: promotional offers v2
/// (`aud` = `promotional-offer`), introductory-offer eligibility
/// (`introductory-offer-eligibility`) and Advanced Commerce in-app requests
/// (`advanced-commerce-api`). Header `alg`/`kid`/`typ`; claims `iss`, `iat` (seconds), `aud`,
/// `bid`, a fresh UUID `nonce`, then the feature's own claims.
/// - Note: Immutable; `Sendable`.
public struct JWSSignatureCreator: Sendable {
    public enum Audience: String, Sendable, CaseIterable {
        case promotionalOffer = "promotional-offer"
        case introductoryOfferEligibility = "introductory-offer-eligibility"
        case advancedCommerce = "advanced-commerce-api"
    }

    public let audience: Audience
    public let keyId: String
    public let issuerId: String
    public let bundleId: String
    private let signer: JWSSigner

    public init(audience: Audience, key: PrivateKey, keyId: String, issuerId: String, bundleId: String) {
        self.audience = audience
        self.keyId = keyId
        self.issuerId = issuerId
        self.bundleId = bundleId
        self.signer = JWSSigner(key: key)
    }

    private func requireAudience(_ expected: Audience) throws(TrustError) {
        guard audience == expected else {
            throw TrustError(
                .signingFailed, "creator was built for audience \(audience.rawValue), not \(expected.rawValue)")
        }
    }

    public func sign(claims feature: [String: JSONValue], now: Timestamp, nonce: UUID = UUID()) throws(TrustError)
        -> String
    {
        var claims = feature
        claims["iss"] = .string(issuerId)
        claims["iat"] = .integer(now.secondsSince1970)
        claims["aud"] = .string(audience.rawValue)
        claims["bid"] = .string(bundleId)
        claims["nonce"] = .string(nonce.uuidString.lowercased())
        return try signer.sign(claims, header: ["kid": keyId, "typ": "JWT"])
    }

    public func promotionalOffer(productId: String, offerIdentifier: String, transactionId: String?, now: Timestamp)
        throws(TrustError) -> String
    {
        try requireAudience(.promotionalOffer)
        var claims: [String: JSONValue] = [
            "productId": .string(productId), "offerIdentifier": .string(offerIdentifier),
        ]
        if let transactionId { claims["transactionId"] = .string(transactionId) }
        return try sign(claims: claims, now: now)
    }

    public func introductoryOfferEligibility(
        productId: String, allowIntroductoryOffer: Bool, transactionId: String, now: Timestamp
    ) throws(TrustError) -> String {
        try requireAudience(.introductoryOfferEligibility)
        return try sign(
            claims: [
                "productId": .string(productId), "allowIntroductoryOffer": .bool(allowIntroductoryOffer),
                "transactionId": .string(transactionId),
            ], now: now)
    }

    /// `request` is the Advanced Commerce request as JSON; it travels base64-encoded.
    public func advancedCommerce(requestJSON: [UInt8], now: Timestamp) throws(TrustError) -> String {
        try requireAudience(.advancedCommerce)
        return try sign(claims: ["request": .string(Data(requestJSON).base64EncodedString())], now: now)
    }
}
