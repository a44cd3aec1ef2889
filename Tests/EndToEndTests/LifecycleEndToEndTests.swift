import Foundation
import StorekeeperTesting
import Testing

/// Every scenario file, run simulator → notifications → Storekeeper → CustomerInfo and webhooks,
/// on SQLite and, when `STOREKEEPER_TEST_POSTGRES_URL` is set, on PostgreSQL.
///
/// Serialized: each run already keeps three loopback servers busy, and on two cores parallel
/// runs only slow each other down.
@Suite(.serialized) struct LifecycleEndToEndTests {
    /// The lifecycles the engine knows, each of which must have a scenario.
    static let requiredScenarios = [
        "new-subscription-renewals.json", "trial-conversion.json", "cancellation-expiry.json",
        "billing-grace-recovery.json", "billing-retry-recovery.json", "billing-failure-expiry.json", "upgrade.json",
        "downgrade-at-renewal.json",
        "refund-and-reversal.json", "family-sharing-revoke.json", "consumable-and-non-consumable.json",
        "lost-notifications-restore.json", "lost-notifications-history-replay.json",
        "auto-renew-off-on.json", "trial-cancelled-expiry.json", "price-increase-consented.json",
        "price-increase-not-consented-expiry.json", "price-increase-without-consent.json",
        "renewal-date-extended.json", "renewal-date-mass-extended.json", "offer-code-first-purchase.json",
        "promotional-offer-subscriber.json", "win-back-offer.json", "resubscribe-after-expiry.json",
        "resubscribe-other-product.json", "crossgrade-same-duration.json", "crossgrade-at-renewal.json",
        "downgrade-withdrawn.json", "non-renewing-subscription.json", "refund-declined.json",
        "consumption-request.json",
        // Google Play, through its pushes (issue 15).
        "play-renewals-cancellation-expiry.json", "play-grace-hold-recovery.json", "play-pause-resume.json",
        "play-revoke-and-void.json", "play-upgrade-linked-token.json", "play-unacknowledged-refund.json",
        "both-stores-same-entitlement.json",
    ]

    @Test func everyLifecycleHasAScenario() {
        #expect(Set(Self.requiredScenarios).isSubset(of: Set(EndToEndScenario.files)))
    }

    @Test(arguments: EndToEndScenario.files)
    func onSQLite(_ file: String) async throws {
        try await EndToEndRunner.run(file, on: .sqlite)
    }

    @Test(
        .enabled(if: TestDatabase.postgresURL != nil, Comment(rawValue: TestDatabase.postgresSkip)),
        arguments: EndToEndScenario.files)
    func onPostgreSQL(_ file: String) async throws {
        try await EndToEndRunner.run(file, on: .postgres(TestDatabase.postgresURL ?? ""))
    }
}
