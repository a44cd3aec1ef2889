import AppStoreModels

/// A payload whose signature, certificate chain and app/environment claims passed every rule
/// of a `SignedDataVerifier`. Only the trust module creates one, so a function that takes a
/// `Verified<…>` cannot be handed unchecked data.
/// - Note: Immutable value; `Sendable`.
public struct Verified<Payload: Sendable>: Sendable {
    public let payload: Payload
    /// The compact JWS exactly as received, kept for audit and replay.
    public let jws: String
    /// The chain that signed it; nil only for the unsigned Xcode / LocalTesting environments.
    public let chain: VerifiedChain?

    init(payload: Payload, jws: String, chain: VerifiedChain?) {
        self.payload = payload
        self.jws = jws
        self.chain = chain
    }
}

/// A V2 notification with its nested signed contents verified by the same verifier.
/// - Note: Immutable value; `Sendable`.
public struct VerifiedNotification: Sendable {
    public let notification: Verified<ResponseBodyV2DecodedPayload>
    public let transaction: Verified<JWSTransactionDecodedPayload>?
    public let renewalInfo: Verified<JWSRenewalInfoDecodedPayload>?
    public let appTransaction: Verified<AppTransaction>?
}
