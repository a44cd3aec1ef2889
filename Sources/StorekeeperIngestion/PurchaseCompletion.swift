import AppStoreModels
import Foundation
import Storage

/// The `purchase_completion` job: asks the App Store Server API for the statuses and history
/// of a signed transaction that was stored and granted without them (Apple was unreachable or
/// slow when it was posted), and applies what they add through the one commit path.
///
/// Durable (a `jobs` row committed with the purchase's facts), so it survives a restart;
/// idempotent (facts are unique, event ids stable, and the job is completed in the same
/// transaction as its facts, so a second run applies nothing).
/// - Note: Immutable and `Sendable`.
public struct PurchaseCompletion: JobHandler {
    public static let kind = "purchase_completion"

    /// What the job row holds: nothing secret.
    /// - Note: Immutable value; `Sendable`.
    public struct Payload: Sendable, Hashable, Codable {
        public var appId: String
        public var environment: AppStoreEnvironment
        /// The posted transaction, asked about as the inline completion would have.
        public var transactionId: String
        /// Who posted it: unowned purchases Apple reveals go to this customer.
        public var appUserId: String

        public init(appId: String, environment: AppStoreEnvironment, transactionId: String, appUserId: String) {
            self.appId = appId
            self.environment = environment
            self.transactionId = transactionId
            self.appUserId = appUserId
        }
    }

    let apps: AppRuntimes
    let purchases: PurchaseIngestor

    public init(apps: AppRuntimes, purchases: PurchaseIngestor) {
        self.apps = apps
        self.purchases = purchases
    }

    public var kind: String { Self.kind }

    public func run(_ job: JobRecord, lease: JobLease) async -> JobOutcome {
        guard job.payload.utf8.count <= 4096,
            let payload = try? AppStoreJSON.decode(Payload.self, from: Data(job.payload.utf8))
        else { return .failed("the job's payload is not a purchase completion") }
        do {
            let app = try await apps.runtime(appId: payload.appId)
            try await purchases.applyCompletion(payload, app: app, lease: lease)
            return .completed
        } catch {
            return Self.outcome(of: error)
        }
    }

    /// Transient failures and lost races are retried; refusals get a few tries; an app that is
    /// gone or has no key fails at once.
    static func outcome(of error: IngestionError) -> JobOutcome {
        if error.isRetryable || error.code == .conflict { return .retry(error.description) }
        switch error.code {
        case .appNotFound, .appNotConfigured, .appStoreNotConfigured, .environmentNotAccepted, .invalidBody:
            return .failed(error.description)
        default:
            return .refused(error.description)
        }
    }
}
