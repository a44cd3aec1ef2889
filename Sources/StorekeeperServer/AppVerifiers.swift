import AppStoreModels
import AppStoreTrust
import Foundation
import Storage
import Synchronization

/// The `SignedDataVerifier`s of every app and environment, built from the app's stored
/// configuration (roots, bundle id, appAppleId) and rebuilt when that configuration changes.
/// - Note: Thread-safe: the cache sits behind a `Mutex`; verifiers are `Sendable`.
public final class AppVerifiers: Sendable {
    private struct Key: Hashable {
        var appId: String
        var environment: AppStoreEnvironment
    }

    private struct Entry {
        var fingerprint: [UInt8]
        var verifier: SignedDataVerifier
    }

    private let entries = Mutex<[Key: Entry]>([:])
    private let clock: @Sendable () -> Timestamp

    public init(clock: @escaping @Sendable () -> Timestamp) {
        self.clock = clock
    }

    /// The verifier for `app` in `environment`. Throws `TrustError` when the app cannot verify
    /// anything in that environment (no roots, no appAppleId for production, unreadable PEM).
    public func verifier(for app: AppRecord, environment: AppStoreEnvironment) throws(TrustError) -> SignedDataVerifier
    {
        let settings = AppSettings(record: app.settings)
        var material = app.bundleId + "|" + String(app.appAppleId ?? -1) + "|" + String(settings.onlineVerification)
        material += "|" + settings.rootCertificatesPEM.joined(separator: "|")
        let fingerprint = Digest.sha256(Array(material.utf8))
        let key = Key(appId: app.id, environment: environment)
        if let entry = entries.withLock({ $0[key] }), entry.fingerprint == fingerprint { return entry.verifier }
        var roots: [Certificate] = []
        for pem in settings.rootCertificatesPEM {
            roots.append(try Certificate(derOrPEM: Array(pem.utf8)))
        }
        if environment.isSigned && roots.isEmpty {
            throw TrustError(.noTrustedRoots, "the app has no root certificates configured")
        }
        let verifier = try SignedDataVerifier(
            rootCertificates: roots, bundleId: app.bundleId, appAppleId: app.appAppleId, environment: environment,
            enableOnlineChecks: settings.onlineVerification, clock: clock)
        entries.withLock { $0[key] = Entry(fingerprint: fingerprint, verifier: verifier) }
        return verifier
    }
}
