import AppStoreModels
import AppStoreTrust
import Storage
import Synchronization

/// Everything ingestion needs about one app, built once from its stored record: the decoded
/// settings, a `SignedDataVerifier` per environment and one App Store connection per
/// environment (so the API client's bearer token, session and in-flight limit are reused
/// across requests instead of rebuilt for each).
///
/// A runtime never changes: when the app is changed, `AppRuntimes` builds a new one.
/// - Note: Thread-safe: the lazily built verifiers and connections sit behind `Mutex`es;
///   everything else is immutable.
public final class AppRuntime: Sendable {
    /// The app's record with its secrets opened (in clear): never save it back.
    public let record: AppRecord
    public let settings: AppSettings

    private let clock: ServerClock
    private let connectionFactory: AppStoreConnectionFactory
    private let verifiers = Mutex<[AppStoreEnvironment: SignedDataVerifier]>([:])
    /// `.some(nil)`: the app has no connection for that environment (cached too).
    private let connections = Mutex<[AppStoreEnvironment: (any AppStoreConnection)?]>([:])

    /// Throws `appNotConfigured` when the stored settings cannot be read.
    public init(record: AppRecord, clock: ServerClock, connections: @escaping AppStoreConnectionFactory)
        throws(IngestionError)
    {
        self.record = record
        self.settings = try AppSettings(record: record.settings)
        self.clock = clock
        self.connectionFactory = connections
    }

    public var id: String { record.id }

    /// The verifier for `environment`. Throws `TrustError` when the app cannot verify anything
    /// in that environment (no roots, no appAppleId for production, unreadable PEM).
    public func verifier(for environment: AppStoreEnvironment) throws(TrustError) -> SignedDataVerifier {
        if let verifier = verifiers.withLock({ $0[environment] }) { return verifier }
        var roots: [Certificate] = []
        for pem in settings.rootCertificatesPEM {
            roots.append(try Certificate(derOrPEM: Array(pem.utf8)))
        }
        if environment.isSigned && roots.isEmpty {
            throw TrustError(.noTrustedRoots, "the app has no root certificates configured")
        }
        let verifier = try SignedDataVerifier(
            rootCertificates: roots, bundleId: record.bundleId, appAppleId: record.appAppleId,
            environment: environment, enableOnlineChecks: settings.onlineVerification, clock: clock.now)
        // Two racing builders make equal verifiers; the first stored wins so its chain cache is shared.
        return verifiers.withLock { cache in
            if let existing = cache[environment] { return existing }
            cache[environment] = verifier
            return verifier
        }
    }

    /// The App Store connection for `environment`, built on first use; `nil` when the app has
    /// neither an App Store Connect key nor a shared secret, which is an error
    /// (`missingAppStoreKey`) if `required`.
    public func connection(_ environment: AppStoreEnvironment, required: Bool) throws(IngestionError)
        -> (any AppStoreConnection)?
    {
        let made: (any AppStoreConnection)?
        if let cached = connections.withLock({ $0[environment] }) {
            made = cached
        } else {
            do {
                made = try connectionFactory(record, settings, environment)
            } catch {
                throw IngestionError.appStoreConfigurationUnusable
            }
            connections.withLock { cache in
                if cache[environment] == nil { cache[environment] = .some(made) }
            }
        }
        if made == nil && required { throw missingAppStoreKey }
        return made
    }

    /// The refusal of a call that needs the App Store Server API when the app has no App Store
    /// Connect key; it mentions the shared secret only to say why that one does not help.
    public var missingAppStoreKey: IngestionError {
        record.sharedSecret != nil && !settings.legacyReceiptFlow
            ? .appStoreNotConfiguredSharedSecretUnused : .appStoreNotConfigured
    }

    /// `wanted` if the app accepts it, else its first environment (`wanted == nil`).
    public func environment(_ wanted: AppStoreEnvironment?) throws(IngestionError) -> AppStoreEnvironment {
        if let wanted {
            guard record.environments.contains(wanted) else {
                throw IngestionError(
                    .environmentNotAccepted, "The app does not accept the \(wanted.rawValue) environment.")
            }
            return wanted
        }
        guard let first = record.environments.first else { throw IngestionError.noEnvironment }
        return first
    }
}
