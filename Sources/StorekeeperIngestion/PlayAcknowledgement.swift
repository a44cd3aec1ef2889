import AppStoreModels
import Entitlements
import Foundation
import Storage

/// What acknowledging one Play purchase needs: the job's payload (nothing secret).
/// - Note: Immutable value; `Sendable`.
public struct PlayAcknowledgementRequest: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable {
        /// `purchases.subscriptions.acknowledge`.
        case subscription
        /// `purchases.products.acknowledge`.
        case product
    }

    public var appId: String
    public var packageName: String
    public var kind: Kind
    /// The subscription's (first line item's) or the product's id, which the v1 endpoints name.
    public var productId: String
    public var purchaseToken: String

    public init(appId: String, packageName: String, kind: Kind, productId: String, purchaseToken: String) {
        self.appId = appId
        self.packageName = packageName
        self.kind = kind
        self.productId = productId
        self.purchaseToken = purchaseToken
    }

    init(snapshot: VerifiedPlaySnapshot, appId: String) {
        switch snapshot.fact {
        case .playProductPurchase(let value):
            self.init(
                appId: appId, packageName: value.packageName, kind: .product, productId: value.productId,
                purchaseToken: value.purchaseToken)
        case .playSubscription(let value):
            self.init(
                appId: appId, packageName: value.packageName, kind: .subscription,
                productId: value.lineItems.map(\.productId).sorted().first ?? "", purchaseToken: value.purchaseToken)
        default:
            self.init(appId: appId, packageName: "", kind: .product, productId: "", purchaseToken: "")
        }
    }
}

/// Why an acknowledgement did not happen: a stable code and a message without secrets.
/// - Note: Immutable value; `Sendable`.
public struct PlayAcknowledgementFailure: Error, Sendable, Hashable {
    public var code: String
    public var message: String
    /// Worth trying again later (429, 5xx, no connection); otherwise Google refused on the merits.
    public var isRetryable: Bool

    public init(code: String, message: String, isRetryable: Bool) {
        self.code = code
        self.message = message
        self.isRetryable = isRetryable
    }
}

/// Acknowledges purchases with Google: the wiring implements it with the Play client
/// (`purchases.subscriptions.acknowledge`, `purchases.products.acknowledge`).
/// - Note: Implementations must be `Sendable` and safe to call concurrently.
public protocol PlayPurchaseAcknowledging: Sendable {
    func acknowledge(_ request: PlayAcknowledgementRequest) async throws(PlayAcknowledgementFailure)
}

/// The `play_acknowledge` job: acknowledges one purchase, counts the attempt on its token
/// (`play_purchase_tokens`: attempts, last error) and completes the job in the same
/// transaction when it succeeded. A token already acknowledged (a later read showed it) or an
/// app that turned acknowledgement off completes without a call. Failures are retried with
/// the job queue's backoff; `report` lists what is still unacknowledged.
/// - Note: Immutable and `Sendable`.
public struct PlayAcknowledgementJob: JobHandler {
    let store: any Store
    let acknowledger: any PlayPurchaseAcknowledging
    let clock: ServerClock

    public init(store: any Store, acknowledger: any PlayPurchaseAcknowledging, clock: ServerClock) {
        self.store = store
        self.acknowledger = acknowledger
        self.clock = clock
    }

    public var kind: String { PlayIngestor.acknowledgeJobKind }

    public func run(_ job: JobRecord, lease: JobLease) async -> JobOutcome {
        guard job.payload.utf8.count <= 16 * 1024,
            let request = try? AppStoreJSON.decode(PlayAcknowledgementRequest.self, from: Data(job.payload.utf8)),
            !request.purchaseToken.isEmpty
        else { return .failed("the job's payload is not a Google Play acknowledgement") }
        let now = clock.now()
        let state: (settings: PlayAppSettings?, token: PlayPurchaseTokenRecord?)
        do {
            state = try await store.read { reader in
                (
                    try reader.playAppSettings(appId: request.appId),
                    try reader.playPurchaseToken(appId: request.appId, purchaseToken: request.purchaseToken)
                )
            }
        } catch {
            return .retry(IngestionError.store(error).message)
        }
        guard let settings = state.settings, state.token != nil else {
            return .failed("the app has no Google Play side or the purchase token is unknown")
        }
        if state.token?.isAcknowledged == true || !settings.acknowledgePurchases {
            return await complete(lease: lease, now: now)
        }
        do throws(PlayAcknowledgementFailure) {
            try await acknowledger.acknowledge(request)
        } catch {
            do {
                try await store.write { transaction in
                    try transaction.recordPlayAcknowledgement(
                        appId: request.appId, purchaseToken: request.purchaseToken, acknowledged: false,
                        error: "\(error.code): \(error.message)", at: now)
                }
            } catch {
                return .retry(IngestionError.store(error).message)
            }
            return error.isRetryable ? .retry(error.code) : .refused(error.code)
        }
        do {
            try await store.write { transaction in
                try transaction.recordPlayAcknowledgement(
                    appId: request.appId, purchaseToken: request.purchaseToken, acknowledged: true, error: nil, at: now)
                _ = try transaction.completeJob(id: lease.jobId, owner: lease.owner, at: now)
            }
        } catch {
            return .retry(IngestionError.store(error).message)
        }
        return .completed
    }

    private func complete(lease: JobLease, now: Timestamp) async -> JobOutcome {
        do {
            try await store.write { transaction in
                _ = try transaction.completeJob(id: lease.jobId, owner: lease.owner, at: now)
            }
            return .completed
        } catch {
            return .retry(IngestionError.store(error).message)
        }
    }

    /// The app's purchases still unacknowledged, oldest first, with their attempts and last
    /// error: what Google refunds three days after purchase unless someone acknowledges them.
    public static func report(appId: String, store: any Store, limit: Int = 100) async throws(IngestionError)
        -> [PlayPurchaseTokenRecord]
    {
        do {
            return try await store.read { try $0.unacknowledgedPlayPurchases(appId: appId, limit: max(1, limit)) }
        } catch {
            throw IngestionError.store(error)
        }
    }
}
