/// One forward-only schema change: a name and the literal SQL for each engine.
///
/// A migration runs in its own transaction together with its row in `schema_migrations`.
/// Once merged, a migration is never edited: a change is a new migration appended to
/// `Migration.all`. Both engines use the same identifiers in the same order.
/// - Note: Immutable value; `Sendable`.
public struct Migration: Sendable, Hashable {
    public let identifier: String
    let sqlite: String
    let postgres: String

    /// A change whose statements are the same on both engines.
    init(identifier: String, sql: String) {
        self.init(identifier: identifier, sqlite: sql, postgres: sql)
    }

    init(identifier: String, sqlite: String, postgres: String) {
        self.identifier = identifier
        self.sqlite = sqlite
        self.postgres = postgres
    }

    func sql(for dialect: SQLDialect) -> String {
        switch dialect {
        case .sqlite: return sqlite
        case .postgres: return postgres
        }
    }

    /// Every migration this binary knows, in order.
    public static let all: [Migration] = [
        initialSchema, sharedPurchases, stateFreshness, perAppKeys, accessSchedule, deliveryLeases, resourceVersions,
        eventIdentity, recovery, jobDedupe, consumption, analytics, backfill, googlePlay, analyticsCohorts,
        analyticsStore, playRecovery, analyticsCohortsLTV, playVoidedResume, analyticsRebuilds, playOrderRevenue,
        analyticsPeriodsCovering,
        analyticsRunEnds, inlineFactRows, factsBeforePayloads, stateDigests, factStamps,
        lazyFactStamps, jwsHeaders, notificationJWSHeaders, renewalJWSHeaders,
        renewalHeaderReader, subscriptionWatchDue, orderedWalks, webhookLeaseSweep,
        subscriptionWatchPollable, webhookQueueDrain, failedDeliveryPages, playWatchClaimable, dashboardWindows,
    ]

    /// The bookkeeping table, created (if missing) before anything else.
    static let bookkeeping = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            identifier TEXT PRIMARY KEY,
            applied_at BIGINT NOT NULL
        )
        """
}
