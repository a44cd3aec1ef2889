import AppStoreModels
import Foundation

/// A customer's facts of one environment, deduplicated and put in a canonical order.
///
/// This is where order independence is made: whatever order and repetition the facts arrive
/// in, the ledger holds the same versions in the same order, and every later step only reads
/// the ledger.
struct FactLedger {
    /// All versions of each transaction, oldest `signedDate` first; the last one wins.
    var versionsByTransactionId: [String: [TransactionFact]] = [:]
    /// Winning versions, by purchase date then transaction id.
    var transactions: [TransactionFact] = []
    /// Renewal snapshots per original transaction id, oldest first.
    var renewalsByOriginalTransactionId: [String: [RenewalFact]] = [:]
    /// Notification envelopes per original transaction id, oldest first.
    var notificationsByOriginalTransactionId: [String: [NotificationFact]] = [:]
    var notes: [String] = []
    /// The Google Play facts, kept apart: they are read by token, not by transaction.
    var play = PlayLedger()

    init(facts: [Fact], environment: AppStoreEnvironment) {
        var renewalSet = Set<Distinct<RenewalFact>>()
        // Distinct snapshots and notifications in the order they came: facts read from the store
        // come in the order they were stored, which is usually the canonical one, so the sorts
        // below then find them in order and move nothing.
        var renewals: [RenewalFact] = []
        var notificationPlace: [String: Int] = [:]
        var notifications: [NotificationFact] = []
        var playSubscriptions = Set<PlaySubscriptionFact>()
        var playProducts = Set<PlayProductPurchaseFact>()
        var playVoided = Set<PlayVoidedPurchaseFact>()
        var playOrders = Set<PlayOrderFact>()
        var ignored = Set<Fact>()
        // The transaction, renewal and notification tables are sized up front from a count of
        // those facts (an upper bound: other environments and repeated versions count too):
        // grown one fact at a time they rehashed every id already in them at each doubling.
        let counts = Self.counts(of: facts)
        versionsByTransactionId.reserveCapacity(counts.transactions)
        renewalSet.reserveCapacity(counts.renewals)
        renewals.reserveCapacity(counts.renewals)
        notificationPlace.reserveCapacity(counts.notifications)
        notifications.reserveCapacity(counts.notifications)
        for fact in facts {
            guard fact.environment == environment else {
                ignored.insert(fact)
                continue
            }
            switch fact {
            case .transaction(let transaction):
                // Grouped as they come, repetitions dropped within the group (`appendDistinct`).
                Self.appendDistinct(&versionsByTransactionId[transaction.transactionId, default: []], transaction)
            case .renewalInfo(let renewal):
                if renewalSet.insert(
                    Distinct(renewal, id: renewal.originalTransactionId, signedDate: renewal.signedDate)
                ).inserted {
                    renewals.append(renewal)
                }
            case .notification(let notification):
                // One notificationUUID is one notification; should two differ, keep one by a
                // content order so the choice does not depend on arrival.
                if let place = notificationPlace[notification.notificationId] {
                    if !Self.canonicalPrecedes(notification, notifications[place]) {
                        notifications[place] = notification
                    }
                    continue
                }
                notificationPlace[notification.notificationId] = notifications.count
                notifications.append(notification)
            case .playSubscription(let snapshot): playSubscriptions.insert(snapshot)
            case .playProductPurchase(let purchase): playProducts.insert(purchase)
            case .playVoidedPurchase(let voided): playVoided.insert(voided)
            case .playOrder(let order): playOrders.insert(order)
            }
        }
        play = PlayLedger(
            subscriptions: playSubscriptions, products: playProducts, voided: playVoided, orders: playOrders)
        var ignoredByEnvironment: [AppStoreEnvironment: Int] = [:]
        for fact in ignored { ignoredByEnvironment[fact.environment, default: 0] += 1 }
        for (other, count) in ignoredByEnvironment.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            notes.append(
                "ignored \(count) fact(s) from \(other.rawValue): \(environment.rawValue) state never mixes environments"
            )
        }

        for (id, versions) in versionsByTransactionId where versions.count > 1 {
            versionsByTransactionId[id] = versions.sorted { lhs, rhs in
                lhs.signedDate != rhs.signedDate
                    ? lhs.signedDate < rhs.signedDate : Self.canonicalPrecedes(lhs, rhs)
            }
        }
        // Winners have distinct transaction ids, so `byPurchase` is a total order; indices are
        // sorted rather than the (large) facts themselves.
        let winners = versionsByTransactionId.values.map { $0.last! }
        transactions = winners.indices.sorted { Self.byPurchase(winners[$0], winners[$1]) }.map { winners[$0] }

        for renewal in renewals {
            renewalsByOriginalTransactionId[renewal.originalTransactionId, default: []].append(renewal)
        }
        for (id, renewals) in renewalsByOriginalTransactionId {
            // Distinct snapshots, so the order is total.
            renewalsByOriginalTransactionId[id] = Self.ordered(renewals) { lhs, rhs in
                lhs.signedDate != rhs.signedDate
                    ? lhs.signedDate < rhs.signedDate : Self.canonicalPrecedes(lhs, rhs)
            }
        }
        for notification in notifications {
            guard let originalTransactionId = notification.originalTransactionId else { continue }
            notificationsByOriginalTransactionId[originalTransactionId, default: []].append(notification)
        }
        for (id, notifications) in notificationsByOriginalTransactionId {
            // One notification per id, so the order is total.
            notificationsByOriginalTransactionId[id] = Self.ordered(notifications) { lhs, rhs in
                lhs.signedDate != rhs.signedDate
                    ? lhs.signedDate < rhs.signedDate : lhs.notificationId < rhs.notificationId
            }
        }
    }

    /// How many of `facts` are App Store transactions, renewal infos and notifications: the
    /// sizes of the tables built from them, known before the first insert.
    static func counts(of facts: [Fact]) -> (transactions: Int, renewals: Int, notifications: Int) {
        var counts = (transactions: 0, renewals: 0, notifications: 0)
        for fact in facts {
            switch fact {
            case .transaction: counts.transactions += 1
            case .renewalInfo: counts.renewals += 1
            case .notification: counts.notifications += 1
            default: break
            }
        }
        return counts
    }

    /// `values` in the total order `precedes`: as they are when already in it (checked in one
    /// pass), else by sorting their positions rather than moving the (large) facts.
    static func ordered<T>(_ values: [T], by precedes: (T, T) -> Bool) -> [T] {
        if values.indices.dropFirst().allSatisfy({ precedes(values[$0 - 1], values[$0]) }) { return values }
        return values.indices.sorted { precedes(values[$0], values[$1]) }.map { values[$0] }
    }

    /// Versions are compared in full only at the same signing instant: stored versions never
    /// share one, so a transaction re-signed many times costs one date comparison per version.
    static func appendDistinct(_ versions: inout [TransactionFact], _ transaction: TransactionFact) {
        if !versions.contains(where: { $0.signedDate == transaction.signedDate && $0 == transaction }) {
            versions.append(transaction)
        }
    }

    static func byPurchase(_ lhs: TransactionFact, _ rhs: TransactionFact) -> Bool {
        lhs.purchaseDate != rhs.purchaseDate
            ? lhs.purchaseDate < rhs.purchaseDate : lhs.transactionId < rhs.transactionId
    }

    /// A total order on equal-dated facts by their canonical JSON; only reached on ties, which
    /// Apple never produces for genuinely different versions, so its cost does not matter.
    static func canonicalPrecedes<T: Encodable>(_ lhs: T, _ rhs: T) -> Bool {
        AppStoreJSON.encode(lhs).lexicographicallyPrecedes(AppStoreJSON.encode(rhs))
    }
}

/// A renewal snapshot in a set that removes repetitions: equal when the snapshots are equal in
/// full, hashed only by its subscription and signing instant. Hashing every field of every
/// snapshot (a dozen strings each) was most of the ledger's cost for a long history; snapshots
/// of one subscription rarely share an instant, so the few that do are told apart by `==`.
private struct Distinct<Value: Equatable>: Hashable {
    var value: Value
    var id: String
    var signedDate: Timestamp

    init(_ value: Value, id: String, signedDate: Timestamp) {
        self.value = value
        self.id = id
        self.signedDate = signedDate
    }

    static func == (lhs: Distinct, rhs: Distinct) -> Bool { lhs.value == rhs.value }

    func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(signedDate)
    }
}
