import AppStoreModels

/// One rule applied to a chain OpenSSL has already built and validated: it returns `nil` to
/// accept or the error naming the rule. Policies run in order; the first refusal wins.
public protocol ChainPolicy: Sendable {
    func check(_ chain: VerifiedChain) -> TrustError?
}

/// Apple's intermediate must carry the WWDR marker extension.
public struct AppleIntermediateOIDPolicy: ChainPolicy {
    public init() {}
    public func check(_ chain: VerifiedChain) -> TrustError? {
        chain.intermediate.hasExtension(oid: AppleOIDs.wwdrIntermediate)
            ? nil
            : TrustError(.intermediateOIDMissing, "intermediate lacks extension \(AppleOIDs.wwdrIntermediate)")
    }
}

/// Apple's signing leaf must carry the receipt-signing marker extension.
public struct AppleLeafOIDPolicy: ChainPolicy {
    public init() {}
    public func check(_ chain: VerifiedChain) -> TrustError? {
        chain.leaf.hasExtension(oid: AppleOIDs.receiptSigningLeaf)
            ? nil
            : TrustError(.leafOIDMissing, "leaf lacks extension \(AppleOIDs.receiptSigningLeaf)")
    }
}

/// ES256 needs a P-256 leaf key; any other key type or curve is refused before verifying.
public struct P256LeafKeyPolicy: ChainPolicy {
    public init() {}
    public func check(_ chain: VerifiedChain) -> TrustError? {
        chain.leafKey.isP256 ? nil : TrustError(.leafKeyNotP256, "leaf public key is not EC P-256")
    }
}
