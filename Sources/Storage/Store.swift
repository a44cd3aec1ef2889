import AppStoreModels
import Entitlements

/// Where Storekeeper keeps everything: apps and their configuration, customers, the verified
/// facts (with the signed payloads verbatim), and what is derived from them (customer state,
/// lifecycle events, the webhook outbox, jobs, the audit log).
///
/// Work happens in closures, GRDB style: `write` runs its body in one database transaction
/// that commits when the body returns and rolls back when it throws, so an ingestion (raw
/// payload + facts + state + events + outbox rows) is all or nothing. `read` runs its body on
/// a consistent snapshot. Bodies run on the store's own threads and must not block on
/// anything but the store; they see the store through `StoreReader` / `StoreTransaction`,
/// whose statements are written out in `SQLStoreTransaction`.
///
/// Writes to one customer serialize: call `StoreTransaction.lockCustomer` (or
/// `ensureCustomer`) first; PostgreSQL holds a row lock until commit, SQLite has a single
/// writer. A failed write throws a `StoreError`; when `isRetryable` the whole closure may run
/// again (see `write(retries:_:)`). A statement error inside a body ends the transaction on
/// PostgreSQL: let it propagate, never catch it and carry on in the same body, unless it came
/// out of `StoreTransaction.withSavepoint`, which undoes the failed part and keeps the rest.
/// - Note: Thread-safe: implementations are `Sendable` and may be shared by any number of tasks.
public protocol Store: Sendable {
    /// `sqlite` or `postgres`.
    var engine: StoreEngine { get }

    /// Runs `body` on a read-only snapshot.
    func read<R: Sendable>(_ body: @escaping @Sendable (any StoreReader) throws -> R) async throws -> R

    /// `read`, run to completion on the calling thread, which may block waiting for a
    /// connection: for the HTTP server's own threads, so a read that needs nothing else skips
    /// the hop to the task pool. Never call it from Swift's cooperative pool.
    func readBlocking<R>(_ body: (any StoreReader) throws -> R) throws -> R

    /// Runs `body` in one transaction: committed (durably) when it returns, rolled back when it
    /// throws. The transaction value must not escape the body.
    func write<R: Sendable>(_ body: @escaping @Sendable (any StoreTransaction) throws -> R) async throws -> R

    /// Waits for running work and closes every connection; later calls throw `closed`.
    func close() async
}

/// The database engine behind a `Store`.
public enum StoreEngine: String, Sendable, Hashable {
    case sqlite
    case postgres
}

extension Store {
    /// `write`, run again (up to `retries` more times) when it fails with a retryable error
    /// (lost connection, serialization failure, deadlock, timeout). The body must be
    /// idempotent in its effects outside the database; inside, a failed attempt left nothing.
    public func write<R: Sendable>(
        retries: Int, _ body: @escaping @Sendable (any StoreTransaction) throws -> R
    ) async throws -> R {
        var attempt = 0
        while true {
            do {
                return try await write(body)
            } catch let error as StoreError where error.isRetryable && attempt < retries {
                attempt += 1
            }
        }
    }
}

/// What a read (and a write) may look at.
/// - Note: Not thread-safe; valid only inside the `read` / `write` body it was passed to.
public protocol StoreReader {
    var engine: StoreEngine { get }

    // Apps and configuration.
    func app(id: String) throws -> AppRecord?
    func apps() throws -> [AppRecord]
    func catalog(appId: String) throws -> ProductCatalog?
    /// `catalog(appId:)` with its version.
    func storedCatalog(appId: String) throws -> StoredCatalog?
    /// An API key by the SHA-256 of its secret (the secret itself is never stored).
    func apiKey(hash: String) throws -> APIKeyRecord?
    func webhookEndpoints(appId: String) throws -> [WebhookEndpoint]
    /// The app's API keys (`nil`: the admin keys), revoked ones included, oldest first.
    func apiKeys(appId: String?) throws -> [APIKeyRecord]

    // Customers.
    func customer(id: Int64) throws -> CustomerRecord?
    func customer(appId: String, _ lookup: CustomerLookup) throws -> CustomerRecord?
    /// The id of the customer `lookup` finds, without its record: for a caller that locks the
    /// customer next (`lockCustomer` reads the record then) or only needs to know it exists.
    func customerId(appId: String, _ lookup: CustomerLookup) throws -> Int64?
    /// Ids of the customers an original transaction is shared with (besides its owner).
    func customersSharing(appId: String, originalTransactionId: String) throws -> [Int64]

    // Facts.
    /// Every fact of the customer (transactions, renewal infos and notifications of the
    /// original transactions it owns or that are shared with it, then its Google Play
    /// snapshots and orders), by table, each in the order stored; ready for
    /// `EntitlementEngine.evaluate`.
    func facts(customerId: Int64) throws -> [Fact]
    /// The same facts as `facts(customerId:)`, in the same order, as their stored JSON.
    func factJSON(customerId: Int64) throws -> [FactJSON]
    /// The same rows as `factJSON(customerId:)`, handed to `body` one at a time in no set order
    /// (sort by `key` for theirs), without copying their text: for a caller that mostly only
    /// compares it with text it already holds.
    func scanFactJSON(customerId: Int64, _ body: (FactRowView) throws(StoreError) -> Void) throws(StoreError)
    /// The customer's purchases in order, each with the stamp the last change to its facts left
    /// (any writer's), so that facts read once are known to be current while the stamps are the
    /// same; `nil` where the store keeps no stamps (PostgreSQL) or a purchase has none
    /// (`StoreTransaction.stampFacts` gives them).
    func factStamps(customerId: Int64) throws -> [PurchaseFactStamp]?
    /// The fact rows this transaction wrote (inserted, or rewrote in place) that take each
    /// purchase from its stamp in `known` to its stamp in `current`, in the order written: the
    /// facts read at `known`, with these in their places, are those stored at `current`.
    /// `nil` unless these writes alone account for every change between the two.
    func factRowsWritten(from known: [PurchaseFactStamp], to current: [PurchaseFactStamp]) -> [FactRowWrite]?
    /// Stored facts of one kind with their raw JWS, oldest first, after the cursor `after`.
    func storedFacts(customerId: Int64, kind: FactKind, after: Int64?, limit: Int) throws -> [StoredFact]
    /// The app's notification with this `notificationUUID` (V1: the id Storekeeper derived).
    func notification(appId: String, uuid: String) throws -> NotificationRecord?
    func notificationCount(appId: String) throws -> Int
    /// The app's notifications matching `filter`, newest first (by row id), without payloads.
    func recentNotifications(appId: String, _ filter: NotificationFilter) throws -> [NotificationSummary]

    // Derived state.
    func customerInfo(customerId: Int64, environment: AppStoreEnvironment) throws -> StoredCustomerInfo?
    /// `customerInfo(customerId:environment:)` undecoded: the stored JSON and its version.
    func customerInfoJSON(customerId: Int64, environment: AppStoreEnvironment) throws -> StoredCustomerInfoJSON?
    /// The stored CustomerInfo JSON (as committed, canonical) of the customer known as
    /// `appUserId` directly or as an alias, without decoding it: the read path of a GET.
    func customerState(appId: String, knownAs appUserId: String, environment: AppStoreEnvironment) throws
        -> CustomerStateLookup
    /// Lifecycle events oldest first, after the cursor `after` (a `StoredEvent.sequence`).
    func events(customerId: Int64, after: Int64?, limit: Int) throws -> [StoredEvent]
    func outboxEntry(id: Int64) throws -> OutboxEntry?
    func outboxEntries(eventSequence: Int64) throws -> [OutboxEntry]
    /// Deliveries of the app's endpoints that are dead-lettered, or still pending after a failed
    /// attempt, oldest first, after the cursor `after` (an outbox id).
    func failedDeliveries(appId: String, after: Int64?, limit: Int) throws -> [OutboxEntry]
    /// Deliveries not yet delivered nor dead-lettered, and when the oldest of them was enqueued.
    func outboxBacklog() throws -> OutboxBacklog
    /// Up to `limit` queues of each kind whose due state disagrees with the outbox (migration
    /// 0037): a delivery pending in a queue drained or missing, or a queue due with nothing
    /// pending. Nothing this binary writes leaves the first; an instance of an earlier version
    /// running beside it can. The second is harmless (claims skip it) and comes from a drain
    /// skipped for a lock or a repair meeting a delivery's end. Reads every pending delivery and
    /// every due queue, and locks nothing: a worker runs it when it starts.
    func deliveryQueueMismatches(limit: Int) throws -> DeliveryQueueMismatches
    /// Endpoints with claimable queues at `now` (see `claimDeliveries`), the longest-waiting
    /// first: where a worker looks for work, endpoint by endpoint, so that one endpoint's backlog
    /// cannot fill every claim.
    func dueDeliveryEndpoints(now: Timestamp, limit: Int) throws -> [String]
    func job(id: Int64) throws -> JobRecord?

    // Recovery workers (0009).
    /// The notification-history cursor of an app and environment; `nil` before its first run.
    func historyCursor(appId: String, environment: AppStoreEnvironment) throws -> HistoryCursor?
    /// Every history cursor, by app and environment (metrics: how old each cursor is).
    func historyCursors() throws -> [HistoryCursor]
    /// What status polling knows about one original transaction; `nil` when it is not watched.
    func subscriptionWatch(appId: String, environment: AppStoreEnvironment, originalTransactionId: String) throws
        -> SubscriptionPoll?

    // Analytics (0012).
    /// The app's analytics settings; `nil` when never saved.
    func analyticsSettings(appId: String) throws -> StoredAnalyticsSettings?
    /// Daily aggregates from `from` through `through` (both included) matching `filter`, summed
    /// per day and currency, in day then currency order.
    func analyticsDailyTotals(
        appId: String, environment: AppStoreEnvironment, from: CalendarDay, through: CalendarDay,
        filter: AnalyticsFilter
    ) throws -> [AnalyticsDailyTotal]
    /// Daily aggregates before `day` matching `filter`, summed per currency (each total dated
    /// `day`): the start of running sums such as the active counts.
    func analyticsTotalsBefore(
        appId: String, environment: AppStoreEnvironment, day: CalendarDay, filter: AnalyticsFilter
    ) throws -> [AnalyticsDailyTotal]
    /// Every non-zero daily aggregate row of the app, in key order.
    func analyticsRows(appId: String) throws -> [AnalyticsDailyRow]
    // Analytics periods (0015).
    /// Subscription periods active at `instant` matching `filter`, per activity and currency.
    func analyticsActiveAt(
        appId: String, environment: AppStoreEnvironment, instant: Timestamp, filter: AnalyticsFilter
    ) throws -> [AnalyticsActiveTotal]
    /// Churn's ended runs matching `filter`, counted per window in `windows`' order: summed by
    /// the database (a 3-year range of days holds a row per subscriber, too many to return).
    func analyticsChurnEnds(
        appId: String, environment: AppStoreEnvironment, windows: [AnalyticsChurnWindow], filter: AnalyticsFilter
    ) throws -> [AnalyticsChurnEnds]
    /// The ids of the app's customers, ascending.
    func customerIds(appId: String) throws -> [Int64]
    // Retention cohorts and realized LTV (0018).
    /// Retention rows of the cohort months `fromMonth` through `throughMonth` (first days)
    /// matching `filter`, per cohort month, product and paid renewals, in that order.
    func analyticsRetention(
        appId: String, environment: AppStoreEnvironment, fromMonth: CalendarDay, throughMonth: CalendarDay,
        filter: AnalyticsFilter
    ) throws -> [RetentionCohortTotal]
    /// LTV rows of the cohort months `fromMonth` through `throughMonth` matching `filter` (on the
    /// first purchase), summed per cohort month, currency and span of purchase days, each dated
    /// its span's last day that has rows, in cohort month, day, currency order. The spans run
    /// between `dayBoundaries` (each starts one; empty: one span), so an answer converting at
    /// rates that change only on those days reads a few rows per cohort; `nil`: a span per day.
    func analyticsLTV(
        appId: String, environment: AppStoreEnvironment, fromMonth: CalendarDay, throughMonth: CalendarDay,
        filter: AnalyticsFilter, dayBoundaries: [CalendarDay]?
    ) throws -> [LTVCohortTotal]
    /// Every non-zero retention and LTV row of the app, in key order.
    func analyticsCohortRows(appId: String) throws -> AnalyticsCohortRows
    // Analytics rebuilds (0020).
    /// The app's rebuild `id`, or its latest when `id` is `nil`; `nil` when there is none.
    func analyticsRebuild(appId: String, id: Int64?) throws -> AnalyticsRebuildRecord?
    /// The app's latest `limit` rebuilds (at most 100), newest first.
    func analyticsRebuilds(appId: String, limit: Int) throws -> [AnalyticsRebuildRecord]
    /// Up to `limit` of the app's customer ids above `after`, ascending.
    func customerIds(appId: String, after: Int64, limit: Int) throws -> [Int64]

    // Consumption answers (0011).
    /// Whether the customer consented to sharing consumption data; `nil` when the app never said.
    func consumptionConsent(appId: String, appUserId: String) throws -> Bool?
    /// What the app reported about a transaction's delivery and usage; `nil` when nothing.
    func consumptionReport(appId: String, transactionId: String) throws -> ConsumptionReport?
    /// How a consumption request (by its notification UUID) was answered; `nil` before it was.
    func consumptionAnswer(appId: String, notificationUUID: String) throws -> ConsumptionAnswerRecord?

    // Google Play (0014).
    /// The app's Play side; `nil` when it has none.
    func playAppSettings(appId: String) throws -> PlayAppSettings?
    /// The app a package name belongs to in an environment.
    func appId(playPackageName: String, environment: AppStoreEnvironment) throws -> String?
    /// A purchase token with its latest snapshot, acknowledgement and owner; `nil` when unknown.
    func playPurchaseToken(appId: String, purchaseToken: String) throws -> PlayPurchaseTokenRecord?
    /// The app's purchase tokens not acknowledged yet, the oldest first: what Google will
    /// refund three days after the purchase unless acknowledged.
    func unacknowledgedPlayPurchases(appId: String, limit: Int) throws -> [PlayPurchaseTokenRecord]
    /// A stored RTDN push by its Pub/Sub `messageId`.
    func playNotification(appId: String, messageId: String) throws -> PlayNotificationRecord?
    /// Which of `orderIds` the app has read from the orders API already (0021).
    func storedPlayOrderIds(appId: String, orderIds: [String]) throws -> Set<String>

    // Google Play recovery (0017).
    /// The app's voided-purchases cursor; `nil` before its first run.
    func playVoidedCursor(appId: String) throws -> PlayVoidedCursor?
    /// Every voided-purchases cursor, by app (metrics: how old each cursor is).
    func playVoidedCursors() throws -> [PlayVoidedCursor]
    /// Whether a Play fact of `kind` is stored for the token at `readAt` (a voided purchase: its
    /// voided time).
    func playSnapshotExists(appId: String, kind: PlayFactKind, purchaseToken: String, readAt: Timestamp) throws
        -> Bool
    /// Voided purchases kept for tokens no read showed yet, the oldest first, at most `limit`
    /// (migration `0019_play_voided_resume` era: the operator's view of refunds waiting for
    /// their purchase).
    func playUnmatchedVoided(appId: String, limit: Int) throws -> [PlayUnmatchedVoided]
    /// How many voided purchases wait for their token's read.
    func playUnmatchedVoidedCount(appId: String) throws -> Int
    /// What the re-read worker knows of a subscription token; `nil` when it is not watched.
    func playSubscriptionWatch(appId: String, purchaseToken: String) throws -> PlaySubscriptionWatch?

    // Receipt backfill (0013).
    /// Whether the export line with this SHA-256 (hex) was imported for the app.
    func backfillLineImported(appId: String, lineDigest: String) throws -> Bool
    /// How many export lines were imported for the app.
    func backfillLineCount(appId: String) throws -> Int
    /// How many receipts (and verifyReceipt answers) were stored for the app.
    func receiptValidationCount(appId: String) throws -> Int

    func auditEntries(after: Int64?, limit: Int) throws -> [AuditEntry]

    // The dashboard (operations and overview pages): aggregate counts, no rows.
    /// An API key by its id (a dashboard session names its key by id and checks it still stands).
    func apiKey(id: String) throws -> APIKeyRecord?
    /// The app's notifications received since `since`, counted by type, subtype and outcome.
    func notificationIntake(appId: String, since: Timestamp) throws -> [NotificationIntakeCount]
    /// The app's refused notifications since `since`, counted by the rule that refused them.
    func verificationFailures(appId: String, since: Timestamp) throws -> [VerificationFailureCount]
    /// The app's webhook outbox in counts.
    func deliverySummary(appId: String) throws -> DeliverySummary
    /// The app's jobs in counts by kind; `running` means under a lease live at `now`.
    func jobQueues(appId: String, now: Timestamp) throws -> [JobQueueSummary]
    /// What status polling watches for the app, by environment.
    func subscriptionWatches(appId: String) throws -> [SubscriptionWatchSummary]
    /// Customers first seen in [from, to), by UTC day.
    func newCustomersByDay(appId: String, from: Timestamp, to: Timestamp) throws -> [DailyCount]
    /// Notifications received in [from, to) (of one environment when given), by UTC day.
    func notificationsByDay(appId: String, environment: AppStoreEnvironment?, from: Timestamp, to: Timestamp) throws
        -> [DailyCount]

    /// Identifiers of the migrations applied to this database.
    func appliedMigrations() throws -> [String]
}

/// What a write transaction may change, in addition to reading.
/// - Note: Not thread-safe; valid only inside the `write` body it was passed to.
public protocol StoreTransaction: StoreReader {
    // Savepoints.
    /// Runs `body` inside a savepoint (`SAVEPOINT`, then `RELEASE`): its writes stay in the
    /// transaction when it returns; when it throws they are undone (`ROLLBACK TO SAVEPOINT`),
    /// the error is rethrown, and the transaction stays usable, on PostgreSQL too, where a
    /// failed statement otherwise aborts the whole transaction. Savepoints nest. This is how
    /// a group commit keeps one failing ingestion from taking the rest of its batch with it.
    /// If the savepoint itself cannot be restored (the connection broke), that failure is
    /// thrown instead and the transaction is unusable: let it propagate.
    func withSavepoint<R>(_ body: () throws -> R) throws -> R
    /// `factStamps(customerId:)`, after giving each of the customer's purchases that has none
    /// a stamp: from then on every change to its facts replaces it (SQLite; only purchases
    /// stamped this way pay for it). `nil` where the store keeps no stamps.
    func stampFacts(customerId: Int64) throws -> [PurchaseFactStamp]?
    /// Throws unless this transaction is still open and can commit. After a failed savepoint
    /// the caller checks this before going on, so a group stops at once: SQLite rolls the whole
    /// transaction back on some I/O and memory errors (its connection then refuses every later
    /// statement), and on PostgreSQL a savepoint that could not be restored leaves it aborted.
    func requireOpen() throws

    // Maintenance.
    /// Brings the planner's statistics of the store's tables (its schema's) up to date after a
    /// bulk load (PostgreSQL `ANALYZE`, as its docs advise after a restore). A statement a
    /// connection has prepared keeps the generic plan made after its first few runs: planned
    /// while a fact table was nearly empty, a customer's facts were found by scanning all of the
    /// app's rows (0.8 ms a read on average while a new table grew to 2,700 notifications) until
    /// autovacuum analyzed it, up to minutes later. Analyzing invalidates those plans. SQLite:
    /// nothing to do; its planner works without statistics here (no `ANALYZE` has ever run on a
    /// Storekeeper store), which keeps its plans independent of the data.
    func refreshPlannerStatistics() throws

    // Apps and configuration. Each save of an app, a catalog or an endpoint returns the row's
    // new version (1 when created, one more on every save). A read-modify-write locks the row
    // first (`lockApp`, `lockWebhookEndpoint`) so that a concurrent one cannot slip in between.
    /// Creates or replaces the app; returns its new version. An app with a Play side claims its
    /// package name in the app's (new) environments: `duplicate` when another app holds it in one.
    @discardableResult
    func saveApp(_ app: AppRecord, at: Timestamp) throws -> Int64
    /// Creates the app (version 1) unless its id exists: `false` then, and nothing changes.
    func insertApp(_ app: AppRecord, at: Timestamp) throws -> Bool
    /// The app's row, locked against other writers until the transaction ends (PostgreSQL
    /// `SELECT … FOR NO KEY UPDATE`; SQLite's single writer already serializes). Locking the
    /// app also serializes writes of its catalog. `nil` for an unknown id.
    func lockApp(id: String) throws -> AppRecord?
    /// Creates or replaces the app's catalog; returns its new version.
    @discardableResult
    func saveCatalog(appId: String, _ catalog: ProductCatalog, at: Timestamp) throws -> Int64
    func saveAPIKey(_ key: APIKeyRecord) throws
    func revokeAPIKey(id: String, at: Timestamp) throws -> Bool
    /// Creates or replaces the endpoint; returns its new version.
    @discardableResult
    func saveWebhookEndpoint(_ endpoint: WebhookEndpoint, at: Timestamp) throws -> Int64
    /// Creates the endpoint (version 1) unless its id exists: `false` then, and nothing changes.
    func insertWebhookEndpoint(_ endpoint: WebhookEndpoint, at: Timestamp) throws -> Bool
    /// The app's endpoint, locked as `lockApp` locks an app; `nil` when the app has no such endpoint.
    func lockWebhookEndpoint(id: String, appId: String) throws -> WebhookEndpoint?
    /// Removes the app's endpoint and, with it, its outbox rows and delivery leases (pending,
    /// failed and delivered: they cannot be sent anywhere now); `false` when there is none.
    func deleteWebhookEndpoint(id: String, appId: String) throws -> Bool

    // Customers.
    /// Finds or creates the customer, moves `lastSeenAt` forward and holds the customer's lock
    /// until the transaction ends.
    func ensureCustomer(appId: String, appUserId: String, at: Timestamp) throws -> CustomerRecord
    /// Bulk `ensureCustomer` for imports: the customers' ids in the order of `appUserIds`
    /// (repeats allowed), each found or created and its `lastSeenAt` moved forward in one
    /// multi-row upsert. The upsert holds each customer's row lock until the transaction ends
    /// (on PostgreSQL the update's lock, which excludes `lockCustomer`), and the customers are
    /// locked in one order whatever the order given.
    func ensureCustomers(appId: String, appUserIds: [String], at: Timestamp) throws -> [Int64]
    /// Holds the customer's lock until the transaction ends (PostgreSQL `SELECT … FOR UPDATE`;
    /// on SQLite the single writer already serializes). Throws `notFound`.
    @discardableResult
    func lockCustomer(id: Int64) throws -> CustomerRecord
    /// Records that the customer owns an original transaction; returns the previous owner if
    /// it belonged to someone else (it is moved), `nil` otherwise.
    @discardableResult
    func claimOriginalTransaction(
        _ originalTransactionId: String, customerId: Int64, at: Timestamp
    ) throws -> Int64?
    /// Bulk `claimOriginalTransaction` for imports: what claiming each in the given order
    /// returns, one multi-row statement for the claims of originals nobody owns yet.
    @discardableResult
    func claimOriginalTransactions(_ claims: [(originalTransactionId: String, customerId: Int64)], at: Timestamp)
        throws -> [Int64?]
    /// Lets the customer see a purchase another customer owns (the `share` transfer policy);
    /// `false` when it already did.
    func sharePurchase(_ originalTransactionId: String, customerId: Int64, at: Timestamp) throws -> Bool
    /// Another id the customer is known by; `duplicate` if it names another customer.
    func addAlias(_ alias: String, customerId: Int64, at: Timestamp) throws
    func addAppAccountToken(_ token: String, customerId: Int64, at: Timestamp) throws

    // Facts: verbatim payloads plus decoded columns; unique keys (each led by the app id) make
    // replays no-ops, and the same payload for two apps is stored for each.
    func insertNotification(_ notification: NewNotification) throws -> Insertion
    /// Creates or replaces the app's Play side and claims its package name in each of
    /// `environments`; `duplicate` when another app holds the package in one of them. Returns
    /// the row's new version.
    @discardableResult
    func savePlayAppSettings(_ settings: PlayAppSettings, environments: [AppStoreEnvironment], at: Timestamp) throws
        -> Int64
    /// A Play snapshot or voided purchase, verbatim, and (for snapshots) the token's latest state.
    func insertPlayFact(_ fact: NewPlayFact) throws -> Insertion
    /// Counts one acknowledgement attempt of a token: settled when `acknowledged`, `error` kept otherwise.
    func recordPlayAcknowledgement(
        appId: String, purchaseToken: String, acknowledged: Bool, error: String?, at: Timestamp) throws
    /// An RTDN push, verbatim; a `messageId` already stored is a `duplicate`.
    func insertPlayNotification(_ notification: NewPlayNotification) throws -> Insertion
    func finishPlayNotification(id: Int64, outcome: String, at: Timestamp) throws
    /// Records how processing the notification ended; `false` when the row already said so
    /// (stored with `NewNotification.presumed` equal to it), in which case nothing is written.
    @discardableResult
    func finishNotification(id: Int64, outcome: String, at: Timestamp) throws -> Bool
    func insertTransaction(_ transaction: NewTransaction) throws -> Insertion
    func insertRenewalInfo(_ renewalInfo: NewRenewalInfo) throws -> Insertion
    /// Bulk `insertTransaction`: the same rows and unique key, written with multi-row
    /// statements; duplicates (already stored, or repeated in `transactions`) are skipped.
    /// Returns how many rows were new.
    @discardableResult
    func insertTransactions(_ transactions: [NewTransaction]) throws -> Int
    /// Bulk `insertRenewalInfo`, as `insertTransactions`.
    @discardableResult
    func insertRenewalInfos(_ renewalInfos: [NewRenewalInfo]) throws -> Int
    func insertReceiptValidation(_ validation: NewReceiptValidation) throws -> Int64

    // Derived state.
    /// Saves the customer's state if the stored version is still `expectedVersion` (`nil`:
    /// none stored yet) and returns the new version; `versionConflict` otherwise.
    func saveCustomerInfo(
        _ info: CustomerInfo, customerId: Int64, expectedVersion: Int64?, at: Timestamp
    ) throws -> Int64
    /// `saveCustomerInfo` with `info` already encoded: `json` must be `AppStoreJSON.encode(info)` as UTF-8 text,
    /// and `digest` (when given) the hex of the first 16 bytes of its SHA-256, stored for reads' ETags.
    func saveCustomerInfo(
        _ info: CustomerInfo, json: String, digest: String?, customerId: Int64, expectedVersion: Int64?,
        at: Timestamp
    ) throws -> Int64
    /// Up to `limit` states whose next scheduled change (`valid_until`) is at or before `now`,
    /// earliest first, for the access scheduler. On PostgreSQL each customer's row is locked
    /// until the transaction ends (the `lockCustomer` lock) and customers locked elsewhere are
    /// skipped, so instances never re-evaluate the same customer at once. Re-evaluating a
    /// state (`saveCustomerInfo`) moves its `valid_until` to the next change.
    func claimDueCustomerStates(now: Timestamp, limit: Int) throws -> [DueCustomerState]
    /// Sets a state's `valid_until` (the scheduler backs off a state it could not re-evaluate).
    func postponeCustomerState(customerId: Int64, environment: AppStoreEnvironment, until: Timestamp) throws
    /// Appends the events whose ids the customer does not have yet, and reinstates those it has
    /// as retracted (with the new content); returns those. An id that stands is left as stored.
    func appendEvents(_ events: [LifecycleEvent], customerId: Int64, at: Timestamp) throws -> [StoredEvent]
    /// Marks the customer's standing events with these ids retracted at `at` (kept: they may
    /// have been delivered); returns those it marked, so the caller can report the correction.
    func retractEvents(ids: [String], customerId: Int64, at: Timestamp) throws -> [StoredEvent]
    /// Rewrites the customer's standing events with these ids whose stored content differs
    /// (an instant, a reason or money a later fact changed), so the stored events are those the
    /// facts imply; returns how many changed. Not a new event: nothing is queued for webhooks.
    /// `texts[i]` is `events[i]`'s stored text (`StoredEventText.of`), worked out beforehand
    /// (off the store's thread, by `CustomerStateUpdater`).
    @discardableResult
    func reviseEvents(_ events: [LifecycleEvent], texts: [String], customerId: Int64) throws -> Int
    /// `reviseEvents` without reading the standing events: each of `events` that stands with a
    /// stored text other than `texts[i]` is rewritten to it; returns how many changed. For a
    /// caller that knows the stored texts already (`CustomerEvaluationCache`) and passes every
    /// event whose stored text may differ from its own.
    @discardableResult
    func rewriteEvents(_ events: [LifecycleEvent], texts: [String], customerId: Int64) throws -> Int
    /// One outbox row per event and enabled endpoint of the app; returns how many were added.
    @discardableResult
    func enqueueDeliveries(of events: [StoredEvent], appId: String, at: Timestamp) throws -> Int

    // Webhook outbox workers.
    /// Claims up to `queues` queues (one customer's deliveries to one endpoint; of `endpointId`
    /// only, or of any endpoint when `nil`) as units: each is taken at its head, the oldest
    /// pending event, with up to `batchSize` deliveries that follow it in event order, leased to
    /// `owner` until `now + leaseMilliseconds` under a new lease generation, and an attempt is
    /// counted for each. A queue is claimable when it holds a pending delivery, is not leased
    /// (or its lease expired) and is due: a failure's retry time holds the whole queue, so a
    /// later event never overtakes an earlier one, and nothing else (an unrelated lease, a later
    /// event's own enqueue time) holds it. Deliveries whose lease expired after their last
    /// allowed attempt are dead-lettered first. On PostgreSQL queues locked by another claimer
    /// are skipped and a queue is never held by two leases at once.
    func claimDeliveries(
        endpointId: String?, owner: String, now: Timestamp, leaseMilliseconds: Int64, queues: Int, batchSize: Int,
        maxAttempts: Int
    ) throws -> [OutboxDelivery]
    /// Mends `mismatches` (`deliveryQueueMismatches`), each checked again: a queue with a
    /// pending delivery that is drained or missing becomes due at `now`; a due queue with nothing
    /// pending is drained.
    func repairDeliveryQueues(_ mismatches: DeliveryQueueMismatches, now: Timestamp) throws -> DeliveryQueueRepair
    /// Extends `lease` to `now + leaseMilliseconds` (the heartbeat of a worker still sending);
    /// `nil` when the lease was lost (another claim took the queue).
    func renewDeliveryLease(_ lease: DeliveryLease, now: Timestamp, leaseMilliseconds: Int64) throws
        -> DeliveryLease?
    /// Gives the queue back: its deliveries still leased under `lease` are returned unsent, their
    /// claim's attempt not counted, and the queue is claimable at once (or at the retry a failure
    /// scheduled). `false` when the lease was lost.
    @discardableResult
    func releaseDeliveries(_ lease: DeliveryLease) throws -> Bool
    /// Puts a dead-lettered delivery of one of the app's endpoints back in the queue, due at
    /// `at` with its attempts reset; `false` when there is no such dead-lettered delivery.
    func replayDelivery(id: Int64, appId: String, at: Timestamp) throws -> Bool
    /// Records a delivery answered 2xx; `false` when `lease` was lost (nothing is recorded).
    func markDelivered(id: Int64, lease: DeliveryLease, at: Timestamp) throws -> Bool
    /// Schedules the next attempt at `retryAt` (the whole queue waits for it), or dead-letters the
    /// delivery when `retryAt` is `nil` (the queue goes on). `false` when `lease` was lost.
    func markFailed(id: Int64, lease: DeliveryLease, error: String, retryAt: Timestamp?, at: Timestamp) throws
        -> Bool

    // Job queue.
    /// Queues a job of `appId` (`nil`: a job of no app). `nil` when an unfinished job of the
    /// same app (a job of no app: any unfinished job of no app) holds `dedupeKey`; a completed
    /// or failed job frees its key.
    func enqueueJob(
        appId: String?, kind: String, payload: String, runAt: Timestamp, dedupeKey: String?, at: Timestamp
    ) throws -> Int64?
    func claimJobs(
        kind: String, owner: String, now: Timestamp, leaseMilliseconds: Int64, limit: Int
    ) throws -> [JobRecord]
    func completeJob(id: Int64, owner: String, at: Timestamp) throws -> Bool
    /// Retries at `retryAt`, or gives up for good when `nil`.
    func failJob(id: Int64, owner: String, error: String, retryAt: Timestamp?, at: Timestamp) throws -> Bool
    /// Extends `owner`'s lease of the job to `until`; `false` when the job is finished or no
    /// longer `owner`'s (the lease ran out and another worker claimed it), and nothing changes.
    /// On PostgreSQL the job's row stays locked until the transaction ends.
    func renewJobLease(id: Int64, owner: String, until: Timestamp) throws -> Bool

    // Recovery workers (0009).
    /// Leases the app's history cursor in `environment` to `owner` until `now + leaseMilliseconds`
    /// (creating it, without a position, on first use); `nil` while another owner's lease runs.
    /// Re-leasing one's own cursor extends it.
    func leaseHistoryCursor(
        appId: String, environment: AppStoreEnvironment, owner: String, now: Timestamp, leaseMilliseconds: Int64
    ) throws -> HistoryCursor?
    /// Moves the cursor forward to `cursor` (never back); `false` when `owner`'s lease is gone.
    func advanceHistoryCursor(
        appId: String, environment: AppStoreEnvironment, owner: String, to cursor: Timestamp, now: Timestamp
    ) throws -> Bool
    /// Ends `owner`'s lease, recording why the run stopped early (`nil`: it completed).
    func releaseHistoryCursor(
        appId: String, environment: AppStoreEnvironment, owner: String, error: String?, now: Timestamp
    ) throws -> Bool
    /// Records what a committed fact says about an auto-renewable subscription (the commit path
    /// calls it with the facts, in their transaction).
    func watchSubscription(_ update: SubscriptionWatchUpdate) throws
    /// Leases up to `limit` watched subscriptions of the app and environment that `rules` say
    /// are due for a status poll; on PostgreSQL rows locked by another claimer are skipped.
    func claimSubscriptionPolls(
        appId: String, environment: AppStoreEnvironment, rules: SubscriptionPollRules, owner: String, now: Timestamp,
        leaseMilliseconds: Int64, limit: Int
    ) throws -> [SubscriptionPoll]
    /// Ends a poll: `polledAt` records a completed poll and frees the row; `nil` keeps the lease
    /// until `retryAt` (the poll failed and waits that long). `false` when the lease was lost.
    func finishSubscriptionPoll(
        appId: String, environment: AppStoreEnvironment, originalTransactionId: String, owner: String,
        polledAt: Timestamp?, retryAt: Timestamp?
    ) throws -> Bool

    // Google Play recovery (0017).
    /// Leases the app's voided-purchases cursor to `owner` until `now + leaseMilliseconds`
    /// (creating it, without a position, on first use); `nil` while another owner's lease runs.
    func leasePlayVoidedCursor(appId: String, owner: String, now: Timestamp, leaseMilliseconds: Int64) throws
        -> PlayVoidedCursor?
    /// Moves the cursor forward to `cursor` (never back) and extends the lease; `false` when
    /// `owner`'s lease is gone.
    func advancePlayVoidedCursor(
        appId: String, owner: String, to cursor: Timestamp, now: Timestamp, leaseMilliseconds: Int64
    ) throws -> Bool
    /// Extends `owner`'s lease and saves the window being listed with the page token of the next
    /// page (`nil`: none open), so a later run resumes there; `false` when the lease is gone.
    func holdPlayVoidedWindow(
        appId: String, owner: String, window: PlayVoidedWindow?, now: Timestamp, leaseMilliseconds: Int64
    ) throws -> Bool
    /// Ends `owner`'s lease, recording why the run stopped early (`nil`: it completed).
    func releasePlayVoidedCursor(appId: String, owner: String, error: String?, now: Timestamp) throws -> Bool
    /// Leases up to `limit` of the app's watched subscription tokens that `rules` say are due
    /// for a re-read; on PostgreSQL rows locked by another claimer are skipped.
    func claimPlayRereads(
        appId: String, rules: PlayRereadRules, owner: String, now: Timestamp, leaseMilliseconds: Int64, limit: Int
    ) throws -> [PlaySubscriptionWatch]
    /// Ends a re-read: `rereadAt` records it and frees the row; `nil` keeps the lease until
    /// `retryAt` (the re-read failed). `false` when the lease was lost.
    func finishPlayReread(
        appId: String, purchaseToken: String, owner: String, rereadAt: Timestamp?, retryAt: Timestamp?
    ) throws -> Bool

    // Analytics (0012).
    /// Saves the app's analytics settings; returns the new version.
    func saveAnalyticsSettings(appId: String, _ settings: AnalyticsSettings, at: Timestamp) throws -> Int64
    /// Replaces what the customer's facts add to the daily aggregates of `environment` with
    /// `contribution`, adding the difference to the daily rows; `true` when the stored
    /// contribution differed (rows were written). The only way a customer changes the rows.
    @discardableResult
    func applyAnalyticsContribution(
        customerId: Int64, appId: String, environment: AppStoreEnvironment,
        _ contribution: [AnalyticsDailyKey: AnalyticsMeasures]
    ) throws -> Bool
    /// Replaces the customer's stored `AnalyticsPeriod`s of `environment`; `true` when they
    /// differed.
    @discardableResult
    func applyAnalyticsPeriods(
        customerId: Int64, appId: String, environment: AppStoreEnvironment, _ periods: [AnalyticsPeriod]
    ) throws -> Bool
    /// Sets each of the app's daily rows to the sum of its customers' stored contributions,
    /// locking the rows first (PostgreSQL) so a concurrent ingestion adds its difference after;
    /// returns how many rows differed from the sum (a rebuild's last step).
    func reconcileAnalyticsDaily(appId: String) throws -> Int
    /// Replaces what the customer's facts add to the retention and LTV rows of `environment`
    /// with `contribution`, adding the difference to the rows (written before commit, sorted,
    /// like the daily rows); `true` when the stored contribution differed.
    @discardableResult
    func applyAnalyticsCohorts(
        customerId: Int64, appId: String, environment: AppStoreEnvironment, _ contribution: CohortContribution
    ) throws -> Bool
    /// Sets the app's retention and LTV rows to the sums of the stored cohort contributions
    /// (locked first on PostgreSQL, like `reconcileAnalyticsDaily`); returns how many differed.
    func reconcileAnalyticsCohorts(appId: String) throws -> Int
    // Analytics rebuilds (0020).
    /// Asks for a rebuild of the app's aggregates for settings `settingsVersion`: supersedes the
    /// unfinished one (and finishes its job, so its worker stops at its next batch), stores a
    /// `queued` rebuild and queues its `analytics_rebuild` job, due at `at`.
    func requestAnalyticsRebuild(appId: String, settingsVersion: Int64, at: Timestamp) throws
        -> AnalyticsRebuildRecord
    /// Marks the unfinished rebuild `running` (started now unless it had started) and counts its
    /// customers still to do into its total; `nil` (nothing changes) when it is finished.
    func startAnalyticsRebuildRun(id: Int64, at: Timestamp) throws -> AnalyticsRebuildRecord?
    /// Records a batch of the running rebuild: the last customer id it recomputed, how many
    /// customers, and how many of them had a stored contribution that differed.
    func advanceAnalyticsRebuild(id: Int64, afterCustomerId: Int64, customers: Int, changed: Int) throws
    /// Marks the running rebuild completed with the rows its last step repaired.
    func completeAnalyticsRebuild(id: Int64, rowsRepaired: Int, at: Timestamp) throws

    // Consumption answers (0011).
    /// Records (or replaces) the customer's consent to sharing consumption data.
    func recordConsumptionConsent(appId: String, appUserId: String, consented: Bool, at: Timestamp) throws
    /// Records (or replaces) the app's report of a transaction's delivery and usage.
    func recordConsumptionReport(appId: String, transactionId: String, report: ConsumptionReport) throws
    /// Records how a consumption request was answered; `false` when it already was (kept).
    @discardableResult
    func recordConsumptionAnswer(_ answer: ConsumptionAnswerRecord) throws -> Bool
    /// Links Apple's refund decision to the answers for the transaction still without one;
    /// returns how many were linked.
    @discardableResult
    func linkConsumptionOutcome(appId: String, transactionId: String, outcome: String, at: Timestamp) throws -> Int

    // Receipt backfill (0013).
    /// Records an imported export line; `false` when it already was (nothing written).
    func recordBackfillLine(appId: String, lineDigest: String, appUserId: String, at: Timestamp) throws -> Bool

    // Audit.
    @discardableResult
    func appendAudit(_ entry: NewAuditEntry) throws -> Int64
}
