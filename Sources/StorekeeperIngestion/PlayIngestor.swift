import AppStoreModels
import Entitlements
import Foundation
import Storage

/// Google Play facts into the one commit path (`FactBatch` → `IngestionWriter` →
/// `FactCommitter`): the verbatim answer, the fact, the owner, the customer's new state, its
/// events and outbox rows in one transaction, as for Apple's facts. No HTTP and no Google
/// calls here: the wiring reads Google and hands over `VerifiedPlaySnapshot`s.
///
/// Identity: a purchase token is owned like an original transaction id, so `claim` runs the
/// app's transfer policy on tokens; the `obfuscatedExternalAccountId` is linked like an app
/// account token (a later notification finds its customer by it); a token replacing another
/// (`linkedPurchaseToken`) goes to that token's owner.
///
/// Acknowledgement: a valid purchase not yet acknowledged queues a `play_acknowledge` job
/// with the facts (one per token, deduplicated), unless the app turned it off.
/// - Note: Immutable and `Sendable`.
public struct PlayIngestor: Sendable {
    let writer: IngestionWriter

    public init(writer: IngestionWriter) {
        self.writer = writer
    }

    /// The app posted a purchase token for its user (`appUserId`): the customer claims the
    /// token under `policy`; the answer is its `CustomerInfo` in the snapshot's environment.
    /// `orders` are the purchase's orders read from the orders API, committed with it.
    public func postPurchase(
        settings: PlayAppSettings, appUserId: String, policy: TransferPolicy, snapshot: VerifiedPlaySnapshot,
        orders: [VerifiedPlaySnapshot] = [], receivedAt: Timestamp
    ) async throws(IngestionError) -> FactCommit {
        guard !appUserId.isEmpty, appUserId.utf8.count <= VerifiedPlaySnapshot.maximumIdentifierBytes else {
            throw IngestionError(.invalidBody, "The app user id is empty or too long.")
        }
        var batch = try Self.batch(
            settings: settings, snapshots: [snapshot] + orders,
            ownership: .claim(appUserId: appUserId, policy: policy), source: "client", receivedAt: receivedAt)
        batch.environment = snapshot.fact.environment
        try await checkEnvironments(settings: settings, snapshots: [snapshot] + orders)
        return try await writer.commit(batch, operation: "play_purchase")
    }

    /// Facts Google told about (an RTDN push, stored verbatim with them and idempotent by its
    /// `messageId`) or a worker read (voided-purchases polling, a re-read after a silent
    /// expiry): each token stays with its owner, or goes to the customer its obfuscated
    /// account id or replaced token names; otherwise it waits unclaimed for the app's post.
    public func ingest(
        settings: PlayAppSettings, notification: NewPlayNotification?, snapshots: [VerifiedPlaySnapshot],
        source: String, receivedAt: Timestamp
    ) async throws(IngestionError) -> FactCommit {
        var batch = try Self.batch(
            settings: settings, snapshots: snapshots, ownership: .existingOwner, source: source,
            receivedAt: receivedAt)
        if let notification {
            guard notification.appId == settings.appId else {
                throw IngestionError(.invalidNotification, "The notification belongs to another app.")
            }
            batch.playNotification = notification
        }
        try await checkEnvironments(settings: settings, snapshots: snapshots)
        return try await writer.commit(batch, operation: "play_notification")
    }

    /// Each snapshot's environment must be one the app holds the package in (a license
    /// tester's purchase is the sandbox): otherwise it belongs to another app, or to none.
    private func checkEnvironments(settings: PlayAppSettings, snapshots: [VerifiedPlaySnapshot])
        async throws(IngestionError)
    {
        let environments = Set(snapshots.map(\.fact.environment))
        let packageName = settings.packageName
        let owners: [AppStoreEnvironment: String]
        do {
            owners = try await writer.store.read { reader in
                var owners: [AppStoreEnvironment: String] = [:]
                for environment in environments {
                    owners[environment] = try reader.appId(playPackageName: packageName, environment: environment)
                }
                return owners
            }
        } catch {
            throw IngestionError.store(error)
        }
        for environment in environments.sorted(by: { $0.rawValue < $1.rawValue })
        where owners[environment] != settings.appId {
            throw IngestionError(
                .environmentNotAccepted,
                "The app does not hold \(packageName) in \(environment.rawValue) (a license tester's purchase is Sandbox)."
            )
        }
    }

    /// The job kind that acknowledges a purchase (`PlayAcknowledgementJob`).
    public static let acknowledgeJobKind = "play_acknowledge"

    static func batch(
        settings: PlayAppSettings, snapshots: [VerifiedPlaySnapshot], ownership: FactBatch.Ownership, source: String,
        receivedAt: Timestamp
    ) throws(IngestionError) -> FactBatch {
        var batch = FactBatch(
            appId: settings.appId, receivedAt: receivedAt,
            environment: snapshots.first?.fact.environment ?? .production, ownership: ownership)
        for snapshot in snapshots {
            guard snapshot.packageName == settings.packageName else {
                throw IngestionError(
                    .invalidTransaction, "The Google Play purchase is for another package than this app's.")
            }
            batch.playFacts.append(
                NewPlayFact(
                    appId: settings.appId, raw: snapshot.raw, fact: snapshot.fact, source: source,
                    receivedAt: receivedAt))
            if let account = snapshot.obfuscatedAccountId { batch.appAccountTokens.append(account) }
            if case .playSubscription(let value) = snapshot.fact, let linked = value.linkedPurchaseToken,
                linked != value.purchaseToken
            {
                batch.linkedPurchaseTokens[value.purchaseToken] = linked
            }
            if settings.acknowledgePurchases, snapshot.needsAcknowledgement {
                let request = PlayAcknowledgementRequest(snapshot: snapshot, appId: settings.appId)
                batch.jobs.append(
                    FactBatch.Job(
                        kind: Self.acknowledgeJobKind,
                        payload: AppStoreJSON.encodeText(request),
                        dedupeKey: "\(Self.acknowledgeJobKind):\(snapshot.purchaseToken)"))
            }
        }
        return batch
    }
}
