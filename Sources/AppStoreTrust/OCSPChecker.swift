import AppStoreModels
import COpenSSL
import Foundation

/// Online revocation check (RFC 6960) of a verified chain, hard-fail: a revoked or unknown
/// status refuses the chain; a responder that cannot be reached is a retryable failure, so the
/// caller answers 503 and Apple redelivers instead of Storekeeper accepting unchecked data.
///
/// The responder URL comes from each certificate's Authority Information Access extension.
/// - Note: Stateless apart from its settings; `Sendable`.
public struct OCSPChecker: Sendable {
    public var timeoutSeconds: Int32
    /// Allowed clock skew when checking the response's thisUpdate/nextUpdate (seconds).
    public var clockSkewSeconds: Int
    public static let maximumResponseSize = 64 * 1024

    public init(timeoutSeconds: Int32 = 5, clockSkewSeconds: Int = 300) {
        self.timeoutSeconds = timeoutSeconds
        self.clockSkewSeconds = clockSkewSeconds
    }

    /// Checks the leaf (issued by the intermediate) and the intermediate (issued by the root).
    public func check(_ chain: VerifiedChain, verifier: ChainVerifier) throws(TrustError) {
        try check(subject: chain.leaf, issuer: chain.intermediate, verifier: verifier)
        try check(subject: chain.intermediate, issuer: chain.root, verifier: verifier)
    }

    public func check(subject: Certificate, issuer: Certificate, verifier: ChainVerifier) throws(TrustError) {
        guard let url = subject.ocspURLs.first else {
            throw TrustError(.ocspURLMissing, "certificate \(subject.subject) names no OCSP responder")
        }
        guard let request = OCSP_REQUEST_new() else {
            throw TrustError(.ocspInvalidResponse, "OpenSSL allocation failed")
        }
        defer { OCSP_REQUEST_free(request) }
        guard let requestId = OCSP_cert_to_id(EVP_sha1(), subject.handle, issuer.handle),
            OCSP_request_add0_id(request, requestId) != nil
        else {
            throw TrustError(.ocspInvalidResponse, "cannot build OCSP request: \(OpenSSLFailure.drain())")
        }
        OCSP_request_add1_nonce(request, nil, -1)

        var reached: Int32 = 0
        let response = COpenSSL_OCSP_query(url, request, timeoutSeconds, Self.maximumResponseSize, &reached)
        guard let response else {
            let reason = OpenSSLFailure.drain()
            if reached == 0 { throw TrustError(.ocspUnreachable, "OCSP responder \(url) unreachable: \(reason)") }
            throw TrustError(.ocspInvalidResponse, "OCSP responder \(url) sent an unreadable response")
        }
        defer { OCSP_RESPONSE_free(response) }
        let responseStatus = OCSP_response_status(response)
        guard responseStatus == OCSP_RESPONSE_STATUS_SUCCESSFUL else {
            throw TrustError(.ocspUnreachable, "OCSP responder \(url) answered status \(responseStatus)")
        }
        guard let basic = OCSP_response_get1_basic(response) else {
            throw TrustError(.ocspInvalidResponse, "OCSP response has no basic response")
        }
        defer { OCSP_BASICRESP_free(basic) }
        // A nonce that is present must match; Apple's responders omit it (pre-signed answers).
        if OCSP_check_nonce(request, basic) == 0 {
            throw TrustError(.ocspInvalidResponse, "OCSP response nonce does not match the request")
        }
        // The response must be signed by the issuer or a responder it delegated to, chaining
        // to one of our roots.
        guard let signers = OPENSSL_sk_new_null() else { throw TrustError(.ocspInvalidResponse, "allocation failed") }
        defer { COpenSSL_sk_X509_free(signers) }
        OPENSSL_sk_push(signers, UnsafeRawPointer(issuer.handle))
        guard let store = X509_STORE_new() else { throw TrustError(.ocspInvalidResponse, "allocation failed") }
        defer { X509_STORE_free(store) }
        for root in verifier.roots { X509_STORE_add_cert(store, root.handle) }
        OpenSSLFailure.clear()
        guard OCSP_basic_verify(basic, signers, store, 0) == 1 else {
            throw TrustError(.ocspInvalidResponse, "OCSP response signature invalid: \(OpenSSLFailure.drain())")
        }
        var status: Int32 = -1, reason: Int32 = -1
        var revokedAt: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        var thisUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        var nextUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        guard let lookupId = OCSP_cert_to_id(EVP_sha1(), subject.handle, issuer.handle) else {
            throw TrustError(.ocspInvalidResponse, "allocation failed")
        }
        defer { OCSP_CERTID_free(lookupId) }
        guard OCSP_resp_find_status(basic, lookupId, &status, &reason, &revokedAt, &thisUpdate, &nextUpdate) == 1 else {
            throw TrustError(.ocspInvalidResponse, "OCSP response does not cover \(subject.subject)")
        }
        guard OCSP_check_validity(thisUpdate, nextUpdate, clockSkewSeconds, -1) == 1 else {
            OpenSSLFailure.clear()
            throw TrustError(.ocspInvalidResponse, "OCSP response for \(subject.subject) is stale or not yet valid")
        }
        switch status {
        case V_OCSP_CERTSTATUS_GOOD: return
        case V_OCSP_CERTSTATUS_REVOKED:
            let reason = reason
            throw TrustError(.certificateRevoked, "certificate \(subject.subject) is revoked (reason \(reason))")
        default:
            throw TrustError(.ocspInvalidResponse, "OCSP status of \(subject.subject) is unknown")
        }
    }
}
