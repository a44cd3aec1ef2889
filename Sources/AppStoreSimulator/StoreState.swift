import AppStoreModels
import Foundation

/// The whole store of one environment: catalog, customers, the transaction ledger and the
/// subscription states, plus the notifications its changes produced but nobody has signed yet.
///
/// A value type mutated by the `AppStoreSimulator` actor only; every operation takes the
/// instant it happens at (STYLE: time is an argument), so the same calls give the same ledger.
struct StoreState: Sendable {
    let environment: AppStoreEnvironment
    let scale: TimeScale
    var apps: [String: SimulatedApp] = [:]
    var customers: [String: SimulatedCustomer] = [:]
    /// Every transaction by id. New ones go through `record(_:)`, which indexes them by customer;
    /// other writes replace a transaction with an update of itself (same id, same customer).
    var transactions: [String: TransactionRecord] = [:]
    /// Transaction ids per customer, as recorded: what a customer's receipt, history and
    /// statuses read, so that each costs the customer's purchases, not the whole store's (a
    /// store of 10,000 customers answers the backfill of all of them).
    private(set) var transactionIdsByCustomer: [String: [String]] = [:]
    var subscriptions: [String: SubscriptionRecord] = [:]
    /// `customer|bundle|group` that may no longer have the introductory offer.
    var introductoryOfferUsed: Set<String> = []
    /// `customer|bundle|offer` win-back offers already redeemed.
    var winBackOffersUsed: Set<String> = []
    var appTransactionIds: [String: String] = [:]
    var firstSeen: [String: Timestamp] = [:]
    var consumptionInformation: [String: Data] = [:]
    var massExtensions: [String: MassExtendRenewalDateStatusResponse] = [:]
    var pending: [NotificationIntent] = []
    private var counter: Int64 = 0
    private var sequence = 0

    init(environment: AppStoreEnvironment, scale: TimeScale) {
        self.environment = environment
        self.scale = scale
    }

    // MARK: Identifiers

    /// Sixteen digits like Apple's; sandbox ids start with 2, production ones with 1 (as far
    /// as anyone can tell from Apple's samples), so a mixed-up id is visible at a glance.
    mutating func nextNumericId() -> String {
        counter += 1
        let base: Int64 = environment == .production ? 1_000_000_000_000_000 : 2_000_000_000_000_000
        return String(base / 10 + counter)
    }

    /// Continues numbering after `offset` (never backwards): see
    /// `AppStoreSimulator.startIdentifiers(after:)`.
    mutating func startIdentifiers(after offset: Int64) {
        counter = max(counter, offset)
    }

    mutating func nextOrderId() -> String {
        counter += 1
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        var value = counter &* 2_654_435_761 & 0xFF_FFFF_FFFF
        var text = ""
        for _ in 0..<8 {
            text.append(alphabet[Int(value % Int64(alphabet.count))])
            value /= Int64(alphabet.count)
        }
        return "MK" + text
    }

    mutating func nextSequence() -> Int {
        sequence += 1
        return sequence
    }

    mutating func appTransactionId(customer: String, bundleId: String, now: Timestamp) -> String {
        let key = customer + "|" + bundleId
        if let known = appTransactionIds[key] { return known }
        counter += 1
        let id = String(704_000_000_000_000_000 + counter)
        appTransactionIds[key] = id
        firstSeen[key] = now
        return id
    }

    // MARK: Lookups

    func app(_ bundleId: String) throws(SimulatorError) -> SimulatedApp {
        guard let app = apps[bundleId] else { throw SimulatorError(.unknownApp, "no app \(bundleId)") }
        return app
    }

    func customer(_ id: String) throws(SimulatorError) -> SimulatedCustomer {
        guard let customer = customers[id] else { throw SimulatorError(.unknownCustomer, "no customer \(id)") }
        return customer
    }

    /// The app selling `productId` (the named one, or the only app that has it).
    func product(_ productId: String, bundleId: String?) throws(SimulatorError) -> (SimulatedApp, SimulatedProduct) {
        let candidates = apps.values.filter { bundleId == nil || $0.bundleId == bundleId }
        for app in candidates.sorted(by: { $0.bundleId < $1.bundleId }) {
            if let product = app.product(productId) { return (app, product) }
        }
        throw SimulatorError(.unknownProduct, "no product \(productId)")
    }

    func transaction(_ id: String) throws(SimulatorError) -> TransactionRecord {
        guard let record = transactions[id] else {
            throw SimulatorError(.unknownTransaction, "no transaction \(id)")
        }
        return record
    }

    func subscription(_ originalTransactionId: String) throws(SimulatorError) -> SubscriptionRecord {
        guard let record = subscriptions[originalTransactionId] else {
            throw SimulatorError(.unknownSubscription, "no subscription \(originalTransactionId)")
        }
        return record
    }

    /// The customer's own (purchased) subscription in a group of an app, if any.
    func ownSubscription(customer: String, bundleId: String, groupId: String) -> SubscriptionRecord? {
        subscriptions(ofCustomer: customer).first {
            $0.bundleId == bundleId && $0.groupId == groupId && $0.familySource == nil
        }
    }

    /// The customer's transactions (own and family-shared copies), in creation order.
    func transactions(ofCustomer customer: String) -> [TransactionRecord] {
        (transactionIdsByCustomer[customer] ?? []).compactMap { transactions[$0] }
            .filter { $0.customerId == customer }.sorted { $0.sequence < $1.sequence }
    }

    /// The customer's subscriptions (own and family-shared): those of the original transactions
    /// of the customer's transactions that the customer holds.
    func subscriptions(ofCustomer customer: String) -> [SubscriptionRecord] {
        var seen: Set<String> = []
        var result: [SubscriptionRecord] = []
        for record in transactions(ofCustomer: customer) where seen.insert(record.originalTransactionId).inserted {
            if let subscription = subscriptions[record.originalTransactionId], subscription.customerId == customer {
                result.append(subscription)
            }
        }
        return result
    }

    /// Transactions in creation order.
    func orderedTransactions(where predicate: (TransactionRecord) -> Bool) -> [TransactionRecord] {
        transactions.values.filter(predicate).sorted { $0.sequence < $1.sequence }
    }

    static func eligibilityKey(_ customer: String, _ bundleId: String, _ suffix: String) -> String {
        customer + "|" + bundleId + "|" + suffix
    }

    // MARK: Recording

    /// Stores a new transaction and returns it.
    @discardableResult
    mutating func record(_ transaction: TransactionRecord) -> TransactionRecord {
        if transactions.updateValue(transaction, forKey: transaction.transactionId) == nil {
            transactionIdsByCustomer[transaction.customerId, default: []].append(transaction.transactionId)
        }
        return transaction
    }

    /// Queues a notification about `transactionId` (and its subscription, when it has one)
    /// with the payloads as they are now.
    mutating func emit(
        _ type: NotificationTypeV2, _ subtype: Subtype? = nil, transactionId: String?, now: Timestamp,
        consumptionRequestReason: ConsumptionRequestReason? = nil
    ) {
        let transaction = transactionId.flatMap { transactions[$0] }
        let subscription = transaction.flatMap { record in
            record.kind == .autoRenewable ? subscriptions[record.originalTransactionId] : nil
        }
        guard let bundleId = transaction?.bundleId else { return }
        pending.append(
            NotificationIntent(
                bundleId: bundleId, customerId: transaction?.customerId, type: type, subtype: subtype,
                transaction: transaction.map { transactionPayload($0, signedDate: now) },
                renewalInfo: subscription.map { renewalPayload($0, signedDate: now) },
                status: subscription?.status,
                consumptionRequestReason: consumptionRequestReason, summary: nil,
                originalTransactionId: transaction?.originalTransactionId, kind: transaction?.kind))
    }

    mutating func takePending() -> [NotificationIntent] {
        defer { pending.removeAll() }
        return pending
    }
}
