import Entitlements
import Storage

/// Re-reading a Play subscription: `subscriptionsv2.get` of one watched token, committed through
/// the one commit path for whoever owns it. What a lost RTDN push would have made Storekeeper
/// read (a renewal, an expiry, a hold, a recovery, a resume) arrives this way instead; the
/// notification type never decided anything, so nothing is missing but the read.
/// - Note: Immutable and `Sendable`.
public struct PlaySubscriptionReread: Sendable {
    let clock: ServerClock
    let ingestor: PlayIngestor

    /// Re-reads `purchaseToken` of `runtime`'s app; returns what the commit did (`applied` when
    /// an owner was re-evaluated, `unclaimed` when nobody owns the token yet).
    public func reread(runtime: PlayRuntime, purchaseToken: String) async throws(IngestionError)
        -> FactCommit.Outcome
    {
        let snapshot = try await runtime.readSubscription(token: purchaseToken)
        return try await ingestor.ingest(
            settings: runtime.settings, notification: nil, snapshots: [snapshot], source: "reread",
            receivedAt: clock.now()
        ).outcome
    }
}
