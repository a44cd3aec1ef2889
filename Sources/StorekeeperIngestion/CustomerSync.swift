import AppStoreModels
import Entitlements
import Foundation
import Storage
import Synchronization

/// On-demand sync of one customer (the app's check at launch): Get All Subscription Statuses
/// for the customer's subscriptions and Get Transaction History for its one-time purchases,
/// once per Apple account (`AppleAccountReadPlan`), all verified and committed now; the answer
/// is the fresh `CustomerInfo`.
///
/// Nothing moves between customers: the commit claims with `keepWithFirst`, so a purchase
/// another customer owns stays with it, and one nobody owns goes to this customer.
/// Rate-limited per customer by `CustomerSyncThrottle`.
/// - Note: Immutable and `Sendable`.
public struct CustomerSync: Sendable {
    let writer: IngestionWriter
    let purchases: PurchaseIngestor
    let clock: ServerClock
    public let throttle: CustomerSyncThrottle

    public func sync(app: AppRuntime, appUserId: String, environment requested: AppStoreEnvironment?)
        async throws(IngestionError) -> CustomerInfo
    {
        guard app.settings.runs(.onDemandSync) else {
            throw app.settings.appStoreConnect == nil
                ? app.missingAppStoreKey
                : IngestionError(.appNotConfigured, "On-demand sync is turned off for this app.")
        }
        let environment = try app.environment(requested)
        let appId = app.id
        let customer: CustomerRecord?
        let stored: StoredCustomerInfo?
        do {
            (customer, stored) = try await writer.store.read { reader in
                guard let customer = try reader.customer(appId: appId, knownAs: appUserId) else { return (nil, nil) }
                return (customer, try reader.customerInfo(customerId: customer.id, environment: environment))
            }
        } catch {
            throw IngestionError.store(error)
        }
        guard let customer else { throw IngestionError.customerNotFound }
        // Admitted by the customer, not the name it was asked by: an unknown id takes no slot,
        // and a customer's aliases share its one.
        try throttle.admit(appId: appId, appUserId: customer.appUserId)
        guard let connection = try app.connection(environment, required: true) else { throw app.missingAppStoreKey }
        // Once per Apple account, from what is stored in this environment (an id of the other
        // environment would be unknown to Apple here).
        let facts = try await purchases.read(
            .customer(stored?.info, owned: customer.originalTransactionIds), app: app, environment: environment,
            via: connection)
        let now = clock.now()
        var batch = FactBatch(
            appId: appId, receivedAt: now, environment: environment,
            ownership: .claim(appUserId: appUserId, policy: .keepWithFirst))
        batch.transactions = facts.transactions.map {
            NewTransaction(appId: appId, jws: $0.jws, fact: $0.fact, source: "sync", receivedAt: now)
        }
        batch.renewals = facts.renewals.map {
            NewRenewalInfo(appId: appId, jws: $0.jws, fact: $0.fact, source: "sync", receivedAt: now)
        }
        let commit = try await writer.commit(batch, operation: "sync_customer")
        return commit.customerInfo ?? CustomerInfo(customerId: appUserId, environment: environment, evaluatedAt: now)
    }
}

/// At most one on-demand sync per customer per `interval`, per process (a sync makes App Store
/// calls for every purchase of the customer; an app calling it at every launch must not spend
/// the app's Apple budget). The table is bounded: when it is full, expired entries are
/// dropped, and then the oldest live one, so a full table never refuses a customer it has not
/// seen (it once did: a flood of ids shut on-demand sync for every app).
/// - Note: Thread-safe: the table sits behind a `Mutex`.
public final class CustomerSyncThrottle: Sendable {
    public let interval: Duration
    public let capacity: Int
    private let now: @Sendable () -> Double
    private let table = Mutex<[String: Double]>([:])

    public init(
        interval: Duration, capacity: Int = 100_000,
        now: @escaping @Sendable () -> Double = AppStoreRateLimiter.monotonicSeconds
    ) {
        self.interval = interval
        self.capacity = max(1, capacity)
        self.now = now
    }

    /// Admits one sync of the customer now, or throws `rateLimited` with the seconds to wait.
    public func admit(appId: String, appUserId: String) throws(IngestionError) {
        let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
        guard seconds > 0 else { return }
        let instant = now()
        // The key is bounded by the route's own limits on appId and appUserId.
        let key = appId + "\u{0}" + appUserId
        let wait: Double? = table.withLock { table in
            if let last = table[key], instant - last < seconds { return seconds - (instant - last) }
            if table[key] == nil && table.count >= capacity {
                table = table.filter { instant - $0.value < seconds }
                if table.count >= capacity, let oldest = table.min(by: { $0.value < $1.value })?.key {
                    table[oldest] = nil
                }
            }
            table[key] = instant
            return nil
        }
        if let wait {
            throw IngestionError(
                .rateLimited, "This customer was synced moments ago; try again later.",
                retryAfterSeconds: max(1, Int(wait.rounded(.up))))
        }
    }
}
