import AppStoreModels
import COpenSSL
import Foundation

/// A chain that OpenSSL built from a leaf and one intermediate up to a configured root and
/// validated (signatures, RFC 5280 validity at `validatedAt`, CA constraints).
/// Only `ChainVerifier` creates one.
/// - Note: Immutable; `Sendable`.
public struct VerifiedChain: Sendable {
    public let leaf: Certificate
    public let intermediate: Certificate
    public let root: Certificate
    public let leafKey: PublicKey
    public let validatedAt: Timestamp
    /// The instants between which every certificate of the chain is valid.
    public let validFrom: Timestamp
    public let validUntil: Timestamp
}

/// Builds leaf → intermediate → trusted root with OpenSSL's RFC 5280 path validation at a given
/// instant, then applies Apple's policies. The certificate Apple puts in `x5c[2]` is ignored:
/// the root always comes from configuration.
///
/// - Note: The `X509_STORE` is filled once and only read afterwards; OpenSSL 3 allows
///   concurrent verifications against one store, each with its own `X509_STORE_CTX`
///   (`@unchecked Sendable`).
public final class ChainVerifier: @unchecked Sendable {
    public let roots: [Certificate]
    public let policies: [any ChainPolicy]
    private let store: OpaquePointer
    /// Digest of the configured roots, so a cache shared by verifiers with other roots
    /// never hands one verifier a chain another one trusted.
    public let rootsDigest: [UInt8]

    public static let applePolicies: [any ChainPolicy] = [
        AppleIntermediateOIDPolicy(), AppleLeafOIDPolicy(), P256LeafKeyPolicy(),
    ]

    public init(roots: [Certificate], policies: [any ChainPolicy] = ChainVerifier.applePolicies) throws(TrustError) {
        guard !roots.isEmpty else { throw TrustError(.noTrustedRoots, "no trusted root certificates configured") }
        guard let store = X509_STORE_new() else { throw TrustError(.chainInvalid, "OpenSSL cannot create a store") }
        for root in roots where X509_STORE_add_cert(store, root.handle) != 1 {
            OpenSSLFailure.clear()  // a duplicate root is harmless
        }
        self.store = store
        self.roots = roots
        self.policies = policies
        self.rootsDigest = Digest.sha256(
            roots.map(\.sha256Fingerprint).sorted { $0.lexicographicallyPrecedes($1) }.joined())
    }

    deinit { X509_STORE_free(store) }

    /// Validates `leaf` issued by `intermediate` up to a configured root at `instant`.
    public func verify(leaf: Certificate, intermediate: Certificate, at instant: Timestamp) throws(TrustError)
        -> VerifiedChain
    {
        guard let context = X509_STORE_CTX_new() else {
            throw TrustError(.chainInvalid, "OpenSSL cannot create a context")
        }
        defer { X509_STORE_CTX_free(context) }
        guard let untrusted = OPENSSL_sk_new_null() else {
            throw TrustError(.chainInvalid, "OpenSSL allocation failed")
        }
        defer { COpenSSL_sk_X509_free(untrusted) }
        OPENSSL_sk_push(untrusted, UnsafeRawPointer(intermediate.handle))
        guard X509_STORE_CTX_init(context, store, leaf.handle, untrusted) == 1 else {
            throw TrustError(.chainInvalid, "OpenSSL cannot initialise verification: \(OpenSSLFailure.drain())")
        }
        X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(context), time_t(instant.secondsSince1970))
        let verified = X509_verify_cert(context) == 1
        let code = X509_STORE_CTX_get_error(context)
        OpenSSLFailure.clear()
        guard verified else { throw Self.error(forVerifyCode: code, at: instant) }

        guard let built = X509_STORE_CTX_get0_chain(context), OPENSSL_sk_num(built) == 3,
            let middle = OPENSSL_sk_value(built, 1), let top = OPENSSL_sk_value(built, 2),
            OpaquePointer(middle) == intermediate.handle,
            let root = roots.first(where: { $0.handle == OpaquePointer(top) })
        else {
            throw TrustError(.chainInvalid, "chain is not exactly leaf → x5c[1] → trusted root")
        }
        guard let key = leaf.publicKey else { throw TrustError(.leafKeyNotP256, "leaf public key unreadable") }
        let certificates = [leaf, intermediate, root]
        let chain = VerifiedChain(
            leaf: leaf, intermediate: intermediate, root: root, leafKey: key, validatedAt: instant,
            validFrom: certificates.compactMap(\.notBefore).max() ?? instant,
            validUntil: certificates.compactMap(\.notAfter).min() ?? instant)
        for policy in policies {
            if let refusal = policy.check(chain) { throw refusal }
        }
        return chain
    }

    static func error(forVerifyCode code: Int32, at instant: Timestamp) -> TrustError {
        let reason = String(cString: X509_verify_cert_error_string(Int(code)))
        switch code {
        case X509_V_ERR_CERT_HAS_EXPIRED:
            return TrustError(.chainExpired, "a certificate had expired at \(instant) (\(reason))")
        case X509_V_ERR_CERT_NOT_YET_VALID:
            return TrustError(.chainNotYetValid, "a certificate was not yet valid at \(instant) (\(reason))")
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY,
            X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN, X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT,
            X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE, X509_V_ERR_CERT_SIGNATURE_FAILURE:
            return TrustError(.chainUntrusted, "chain does not lead to a trusted root (\(reason))")
        default:
            return TrustError(.chainInvalid, "chain validation failed (\(reason))")
        }
    }
}
