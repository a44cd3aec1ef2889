import AppStoreModels
import Foundation

/// Verifies and decodes everything the App Store signs: transactions, renewal info,
/// notifications (with their nested signed fields) and app transactions.
///
/// Rules, in order, first refusal wins (each has its own `TrustRule` code):
/// size ≤ 1 MiB → 3 base64url parts → JSON objects without repeated keys → `alg` is exactly
/// `ES256` → `x5c` has exactly 3 certificates → leaf → `x5c[1]` → configured root valid at
/// the effective date (payload `signedDate` / `receiptCreationDate` when online checks are off,
/// now when on) → Apple's intermediate and leaf OIDs → P-256 leaf → 64-byte r‖s signature that
/// verifies → OCSP (online only) → the payload is of the requested type (`PayloadTypeRule`) →
/// bundle id / appAppleId / environment as Apple's library applies them per type.
///
/// The Xcode and LocalTesting environments carry no Apple signature; a verifier configured
/// for them decodes without signature checks and can never accept Production or Sandbox data.
/// - Note: Thread-safe: immutable settings plus a `Mutex`-guarded chain cache.
public final class SignedDataVerifier: Sendable {
    public let environment: AppStoreEnvironment
    public let bundleId: String
    public let appAppleId: Int64?
    public let enableOnlineChecks: Bool
    public let cache: VerifiedChainCache
    private let chainVerifier: ChainVerifier?
    private let ocsp: OCSPChecker
    private let clock: @Sendable () -> Timestamp

    public init(
        rootCertificates: [Certificate],
        bundleId: String,
        appAppleId: Int64?,
        environment: AppStoreEnvironment,
        enableOnlineChecks: Bool = false,
        ocsp: OCSPChecker = OCSPChecker(),
        cache: VerifiedChainCache = VerifiedChainCache(),
        clock: @escaping @Sendable () -> Timestamp = { Timestamp(Date()) }
    ) throws(TrustError) {
        if environment == .production, appAppleId == nil {
            throw TrustError(.appAppleIdRequired, "appAppleId is required for the Production environment")
        }
        self.environment = environment
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.enableOnlineChecks = enableOnlineChecks
        self.cache = cache
        self.ocsp = ocsp
        self.clock = clock
        self.chainVerifier = environment.isSigned ? try ChainVerifier(roots: rootCertificates) : nil
    }

    // MARK: Typed entry points

    public func verifyAndDecodeTransaction(_ jws: String) throws(TrustError) -> Verified<JWSTransactionDecodedPayload> {
        let verified = try verify(jws, as: JWSTransactionDecodedPayload.self, kind: .transaction) { $0.signedDate }
        let payload = verified.payload
        guard payload.bundleId == bundleId else {
            throw TrustError(.bundleIdMismatch, "transaction bundleId does not match \(self.bundleId)")
        }
        try checkEnvironment(payload.environment?.rawValue)
        return verified
    }

    public func verifyAndDecodeRenewalInfo(_ jws: String) throws(TrustError) -> Verified<JWSRenewalInfoDecodedPayload> {
        let verified = try verify(jws, as: JWSRenewalInfoDecodedPayload.self, kind: .renewalInfo) { $0.signedDate }
        try checkEnvironment(verified.payload.environment?.rawValue)
        return verified
    }

    public func verifyAndDecodeAppTransaction(_ jws: String) throws(TrustError) -> Verified<AppTransaction> {
        let verified = try verify(jws, as: AppTransaction.self, kind: .appTransaction) { $0.receiptCreationDate }
        let payload = verified.payload
        guard payload.bundleId == bundleId else {
            throw TrustError(.bundleIdMismatch, "app transaction bundleId does not match \(self.bundleId)")
        }
        if environment == .production, payload.appAppleId != appAppleId {
            throw TrustError(.appAppleIdMismatch, "app transaction appAppleId does not match the configured one")
        }
        try checkEnvironment(payload.receiptType?.rawValue)
        return verified
    }

    public func verifyAndDecodeNotification(_ signedPayload: String) throws(TrustError) -> Verified<
        ResponseBodyV2DecodedPayload
    > {
        let verified = try verify(signedPayload, as: ResponseBodyV2DecodedPayload.self, kind: .notification) {
            $0.signedDate
        }
        let payload = verified.payload
        let claimed: (bundleId: String?, appAppleId: Int64?, environment: String?)
        if let data = payload.data {
            claimed = (data.bundleId, data.appAppleId, data.environment?.rawValue)
        } else if let summary = payload.summary {
            claimed = (summary.bundleId, summary.appAppleId, summary.environment?.rawValue)
        } else if let token = payload.externalPurchaseToken {
            claimed = (token.bundleId, token.appAppleId, token.derivedEnvironment.rawValue)
        } else if let appData = payload.appData {
            claimed = (appData.bundleId, appData.appAppleId, appData.environment?.rawValue)
        } else {
            claimed = (nil, nil, nil)
        }
        guard claimed.bundleId == bundleId else {
            throw TrustError(.bundleIdMismatch, "notification bundleId does not match \(self.bundleId)")
        }
        if environment == .production, claimed.appAppleId != appAppleId {
            throw TrustError(.appAppleIdMismatch, "notification appAppleId does not match the configured one")
        }
        try checkEnvironment(claimed.environment)
        return verified
    }

    /// Verifies a notification and every signed payload nested in it.
    public func verifyAndDecodeNotificationContents(_ signedPayload: String) throws(TrustError) -> VerifiedNotification
    {
        let notification = try verifyAndDecodeNotification(signedPayload)
        let data = notification.payload.data
        return VerifiedNotification(
            notification: notification,
            transaction: try data?.signedTransactionInfo.map { (jws) throws(TrustError) in
                try verifyAndDecodeTransaction(jws)
            },
            renewalInfo: try data?.signedRenewalInfo.map { (jws) throws(TrustError) in
                try verifyAndDecodeRenewalInfo(jws)
            },
            appTransaction: try notification.payload.appData?.signedAppTransactionInfo.map { (jws) throws(TrustError) in
                try verifyAndDecodeAppTransaction(jws)
            })
    }

    // MARK: Shared rules

    private func checkEnvironment(_ claimed: String?) throws(TrustError) {
        guard claimed == environment.rawValue else {
            throw TrustError(.environmentMismatch, "payload environment is not \(self.environment.rawValue)")
        }
    }

    /// Signature and chain rules common to every signed type, then the payload type rule.
    func verify<Payload: Decodable & Sendable>(
        _ token: String, as type: Payload.Type, kind: SignedPayloadKind, effectiveDate: (Payload) -> Timestamp?
    ) throws(TrustError) -> Verified<Payload> {
        let jws = try CompactJWS(token)
        guard let chainVerifier else {
            // Xcode / LocalTesting: Apple does not sign these; decoding is all there is.
            _ = try jws.header()
            let (payload, keys) = try CompactJWS.decodeObjectAndKeys(Payload.self, from: jws.payload, part: "payload")
            try PayloadTypeRule.check(topLevelKeys: keys, expected: kind)
            return Verified(payload: payload, jws: token, chain: nil)
        }
        let (payload, keys) = try CompactJWS.decodeObjectAndKeys(Payload.self, from: jws.payload, part: "payload")
        let now = clock()
        let instant = enableOnlineChecks ? now : (effectiveDate(payload) ?? now)
        let chain = try chain(for: jws, at: instant, now: now, verifier: chainVerifier)
        try jws.verifyES256Signature(with: chain.leafKey, signer: "the leaf key")
        try PayloadTypeRule.check(topLevelKeys: keys, expected: kind)
        return Verified(payload: payload, jws: token, chain: chain)
    }

    /// The chain named by the header. The cache is keyed by the header text itself: an
    /// identical header was already decoded, had `alg` ES256 and exactly these certificates,
    /// so a hit skips header parsing and path validation and leaves one ECDSA verification.
    private func chain(for jws: CompactJWS, at instant: Timestamp, now: Timestamp, verifier: ChainVerifier)
        throws(TrustError) -> VerifiedChain
    {
        let key = VerifiedChainCache.key(header: jws.headerSegment, roots: verifier.rootsDigest)
        if let cached = cache.chain(for: key, at: instant, now: now, requireOnline: enableOnlineChecks) {
            return cached
        }
        let header = try jws.es256Header()
        guard let x5c = header.x5c else { throw TrustError(.x5cMissing, "JWS header has no x5c certificate chain") }
        guard x5c.count == 3 else {
            throw TrustError(.chainLength, "x5c has \(x5c.count) certificates, expected 3")
        }
        let chain = try self.chain(leaf: x5c[0], intermediate: x5c[1], at: instant, verifier: verifier)
        cache.store(chain, for: key, now: now, onlineChecked: enableOnlineChecks)
        return chain
    }

    private func chain(leaf: String, intermediate: String, at instant: Timestamp, verifier: ChainVerifier)
        throws(TrustError) -> VerifiedChain
    {
        guard let leafDER = Data(base64Encoded: leaf), let intermediateDER = Data(base64Encoded: intermediate) else {
            throw TrustError(.certificateMalformed, "x5c entry is not base64 DER")
        }
        let chain = try verifier.verify(
            leaf: Certificate(der: [UInt8](leafDER)), intermediate: Certificate(der: [UInt8](intermediateDER)),
            at: instant)
        if enableOnlineChecks { try ocsp.check(chain, verifier: verifier) }
        return chain
    }
}

extension AppStoreEnvironment {
    /// Whether Apple signs payloads of this environment with its certificate chain.
    public var isSigned: Bool { self == .production || self == .sandbox }
}
