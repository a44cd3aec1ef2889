import AppStoreModels

/// The transactions, renewal snapshots and notifications sharing one original transaction id:
/// one customer's life in one subscription group, read as a sequence of periods.
///
/// Each period is one transaction. How a period starts (first purchase, renewal, trial
/// conversion, billing recovery, resubscription, immediate product change) and how it ends
/// (renewed, upgraded, refunded, billing retry, expired) is decided from Apple's dates only,
/// so the reading is the same whatever order the facts arrived in.
struct SubscriptionChain {
    /// How a period began relative to the one before it.
    enum Start: Equatable {
        case initial
        case renewal
        case trialConversion
        case billingRecovery
        case resubscribe
        case productChange(ProductChange)

        /// Starts a new run of service: auto-renew and pending changes begin afresh.
        var beginsRun: Bool { self == .initial || self == .resubscribe }
    }

    /// A renewal landing this close after the previous expiry is the same run of service
    /// (Apple's renewals are charged at, or up to a day before, the expiry).
    static let renewalTolerance: Int64 = 60_000
    /// Apple retries billing for up to 60 days.
    static let billingRetryWindow: Int64 = 60 * CivilCalendar.millisecondsPerDay

    let originalTransactionId: String
    let transactions: [TransactionFact]
    let snapshots: [RenewalFact]
    let notifications: [NotificationFact]
    let catalog: ProductCatalog

    private(set) var starts: [Start] = []
    /// Where each period's access ends, ignoring billing retry: expiry, upgrade or revocation.
    private(set) var effectiveEnds: [Timestamp] = []
    /// A renewal failed at the end of this period (retry or grace seen, or a recovery).
    private(set) var billingIssue: [Bool] = []
    private(set) var graceEnds: [Timestamp?] = []
    /// When Apple stopped retrying (EXPIRED, a non-retry snapshot, the next purchase, 60 days).
    private(set) var retryEnds: [Timestamp] = []
    private(set) var runStarts: [Int] = []
    /// Periods that begin after a gap in the facts (a `RENEWAL` whose previous period is missing).
    private(set) var factGapStarts: Set<Int> = []

    init(
        originalTransactionId: String, transactions: [TransactionFact], snapshots: [RenewalFact],
        notifications: [NotificationFact], catalog: ProductCatalog
    ) {
        self.originalTransactionId = originalTransactionId
        self.transactions = transactions
        self.snapshots = snapshots
        self.notifications = notifications
        self.catalog = catalog
        read()
    }

    func expires(_ index: Int) -> Timestamp {
        transactions[index].expiresDate ?? transactions[index].purchaseDate
    }

    /// Whether period `index` was replaced mid-period by another product (upgrade, or crossgrade
    /// of equal duration). Apple marks the old transaction `isUpgraded`; a notification about the
    /// upgrade carries only the new one, so until that version arrives a purchase of another
    /// product well before the period ends says the same.
    func isSuperseded(_ index: Int) -> Bool {
        Self.isSuperseded(in: transactions, at: index, next: index + 1 < transactions.count ? index + 1 : nil)
    }

    /// The same for the chain's transaction at `position` of `transactions`, followed in its
    /// chain by the one at `next` (nil for the last). Positions, not copies of the transactions:
    /// `PaidServiceAccrual` asks it of every transaction of a long history.
    static func isSuperseded(in transactions: [TransactionFact], at position: Int, next: Int?) -> Bool {
        let transaction = transactions[position]
        if transaction.isUpgraded { return true }
        guard let next, !transaction.isRevokedOtherThanByUpgrade else { return false }
        let expiry = transaction.expiresDate ?? transaction.purchaseDate
        return transactions[next].productId != transaction.productId
            && transactions[next].purchaseDate.millisecondsSince1970
                < expiry.millisecondsSince1970 - renewalTolerance
    }

    /// The subscription group of a chain whose first transaction is `first`: the catalog's,
    /// else the transaction's, else one of its own named after the product.
    static func group(startingWith first: TransactionFact, catalog: ProductCatalog) -> String {
        catalog[first.productId]?.subscriptionGroup ?? first.subscriptionGroup ?? "product:\(first.productId)"
    }

    /// Snapshots and notifications signed while period `index` was the latest one.
    func window(_ index: Int) -> (snapshots: ArraySlice<RenewalFact>, notifications: ArraySlice<NotificationFact>) {
        let start = transactions[index].purchaseDate
        let end = index + 1 < transactions.count ? transactions[index + 1].purchaseDate : nil
        let snapshotRange =
            Self.lowerBound(snapshots, start)..<(end.map { Self.lowerBound(snapshots, $0) } ?? snapshots.count)
        let notificationRange =
            Self.lowerBound(
                notifications, start)..<(end.map { Self.lowerBound(notifications, $0) } ?? notifications.count)
        return (snapshots[snapshotRange], notifications[notificationRange])
    }

    private mutating func read() {
        let count = transactions.count
        var observedRetry = [Bool](repeating: false, count: count)
        graceEnds = [Timestamp?](repeating: nil, count: count)
        retryEnds = [Timestamp](repeating: Timestamp(millisecondsSince1970: 0), count: count)
        effectiveEnds = []
        let recoveredTransactionIds = Set(
            notifications.lazy.filter {
                $0.type == NotificationTypeV2.didRenew.rawValue && $0.subtype == Subtype.billingRecovery.rawValue
            }.compactMap(\.transactionId))
        for index in 0..<count {
            let transaction = transactions[index]
            let next = index + 1 < count ? transactions[index + 1] : nil
            var end = expires(index)
            if isSuperseded(index) {
                end = transaction.revocationDate ?? next?.purchaseDate ?? end
            } else if let revoked = transaction.revocationDate {
                end = min(end, revoked)
            }
            effectiveEnds.append(end)

            let expiry = expires(index)
            var (windowSnapshots, windowNotifications) = window(index)
            // A recovery Apple reports (DID_RENEW / BILLING_RECOVERY) during the grace period keeps
            // the renewal date: the retry and grace reported between the expiry and the recovery
            // (signed then) belong to this period, and the retry ended with the recovery. Without
            // this the facts of the whole story would imply no grace period, while the facts
            // before the recovery did.
            var nextStart = next?.purchaseDate
            if let next, recoveredTransactionIds.contains(next.transactionId), next.signedDate > next.purchaseDate {
                nextStart = next.signedDate
                windowSnapshots =
                    snapshots[windowSnapshots.startIndex..<Self.lowerBound(snapshots, next.signedDate)]
                windowNotifications =
                    notifications[windowNotifications.startIndex..<Self.lowerBound(notifications, next.signedDate)]
            }
            var grace: Timestamp?
            var retrySeen = false
            var retryEnd = expiry.adding(milliseconds: Self.billingRetryWindow)
            if let nextStart { retryEnd = min(retryEnd, max(nextStart, expiry)) }
            for snapshot in windowSnapshots {
                if snapshot.isInBillingRetryPeriod { retrySeen = true }
                if let graceDate = snapshot.gracePeriodExpiresDate, graceDate > expiry {
                    retrySeen = true
                    grace = max(grace ?? graceDate, graceDate)
                }
                if !snapshot.isInBillingRetryPeriod, snapshot.signedDate >= expiry,
                    (snapshot.gracePeriodExpiresDate ?? expiry) <= snapshot.signedDate
                {
                    retryEnd = min(retryEnd, snapshot.signedDate)
                }
            }
            for notification in windowNotifications {
                switch notification.type {
                case NotificationTypeV2.didFailToRenew.rawValue:
                    retrySeen = true
                case NotificationTypeV2.gracePeriodExpired.rawValue:
                    retrySeen = true
                    grace = min(grace ?? notification.signedDate, notification.signedDate)
                case NotificationTypeV2.expired.rawValue where notification.signedDate >= expiry:
                    if notification.subtype == Subtype.billingRetry.rawValue { retrySeen = true }
                    retryEnd = min(retryEnd, notification.signedDate)
                default: break
                }
            }
            observedRetry[index] = retrySeen
            graceEnds[index] = grace.map { min($0, retryEnd) }
            retryEnds[index] = retryEnd
        }

        starts = []
        runStarts = []
        factGapStarts = []
        billingIssue = observedRetry
        for index in 0..<count {
            let start: Start
            if index == 0 {
                start = .initial
            } else {
                let previous = transactions[index - 1]
                let current = transactions[index]
                if isSuperseded(index - 1) {
                    start = .productChange(
                        ProductChange(
                            fromProductId: previous.productId, toProductId: current.productId,
                            kind: ProductChange.classify(
                                from: catalog[previous.productId], to: catalog[current.productId], timing: .immediate),
                            timing: .immediate, effectiveAt: current.purchaseDate))
                } else if previous.isRevokedOtherThanByUpgrade {
                    start = .resubscribe
                } else {
                    let gap = current.purchaseDate.millisecondsSince1970 - expires(index - 1).millisecondsSince1970
                    if recoveredTransactionIds.contains(current.transactionId) {
                        // Apple says so (DID_RENEW / BILLING_RECOVERY, V1 DID_RECOVER): a recovery
                        // during the grace period keeps the renewal date, so there is no gap to see.
                        start = .billingRecovery
                        billingIssue[index - 1] = true
                    } else if gap <= Self.renewalTolerance {
                        start =
                            previous.periodType == .trial && current.periodType != .trial ? .trialConversion : .renewal
                    } else if observedRetry[index - 1]
                        && (current.transactionReason == .renewal || current.transactionReason == nil)
                    {
                        start = .billingRecovery
                        billingIssue[index - 1] = true
                    } else {
                        // A renewal after a gap with no sign of billing retry means a period is
                        // missing from the facts, not that a payment failed: no billing issue or
                        // recovery is invented. Access ended with the last known period, so the
                        // later one starts a new run like a resubscription (marked `afterFactGap`).
                        if current.transactionReason == .renewal { factGapStarts.insert(index) }
                        start = .resubscribe
                    }
                }
            }
            starts.append(start)
            runStarts.append(start.beginsRun ? index : runStarts[index - 1])
        }
    }

    static func lowerBound(_ snapshots: [RenewalFact], _ instant: Timestamp) -> Int {
        var low = 0
        var high = snapshots.count
        while low < high {
            let middle = (low + high) / 2
            if snapshots[middle].signedDate < instant { low = middle + 1 } else { high = middle }
        }
        return low
    }

    static func lowerBound(_ notifications: [NotificationFact], _ instant: Timestamp) -> Int {
        var low = 0
        var high = notifications.count
        while low < high {
            let middle = (low + high) / 2
            if notifications[middle].signedDate < instant { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The period that was the latest at `instant` (the first one before any purchase).
    func periodIndex(at instant: Timestamp) -> Int {
        var low = 0
        var high = transactions.count
        while low < high {
            let middle = (low + high) / 2
            if transactions[middle].purchaseDate <= instant { low = middle + 1 } else { high = middle }
        }
        return max(0, low - 1)
    }

    /// When the customer stopped being a subscriber after period `index` ended without renewal:
    /// at the expiry, or when billing retry gave up.
    func lapseTime(_ index: Int) -> Timestamp {
        billingIssue[index] ? retryEnds[index] : expires(index)
    }

    /// When access ended after period `index` if it was not renewed in time: at the end of the
    /// billing grace period when a renewal failed with one (GRACE_PERIOD_EXPIRED may end it
    /// early), otherwise at the expiry. Billing retry does not keep access, so a failed renewal
    /// without grace ends access at the expiry even though the customer is not churned yet.
    func accessEnd(_ index: Int) -> Timestamp {
        let expiry = expires(index)
        guard billingIssue[index], let grace = graceEnds[index] else { return expiry }
        return max(expiry, grace)
    }

    /// Snapshots of the run that period `index` belongs to, up to the end of its window.
    func runSnapshots(through index: Int) -> ArraySlice<RenewalFact> {
        let from = Self.lowerBound(snapshots, transactions[runStarts[index]].purchaseDate)
        let to =
            index + 1 < transactions.count
            ? Self.lowerBound(snapshots, transactions[index + 1].purchaseDate) : snapshots.count
        return snapshots[from..<max(from, to)]
    }

    /// Auto-renew as last reported in the run (Apple turns it on with every purchase).
    func autoRenew(through index: Int) -> (enabled: Bool, offSince: Timestamp?) {
        let run = runSnapshots(through: index)
        var enabled = true
        var offSince: Timestamp?
        for snapshot in run {
            guard let value = snapshot.autoRenewEnabled else { continue }
            if !value && enabled { offSince = snapshot.signedDate }
            if value { offSince = nil }
            enabled = value
        }
        return (enabled, offSince)
    }

    func expirationReason(_ index: Int) -> ExpirationReason {
        let (windowSnapshots, windowNotifications) = window(index)
        let expiry = expires(index)
        if let reason = windowNotifications.first(where: {
            $0.type == NotificationTypeV2.expired.rawValue && $0.signedDate >= expiry
        }).flatMap({ ExpirationReason(expiredSubtype: $0.subtype) }) {
            return reason
        }
        if let reason = windowSnapshots.last(where: { $0.expirationIntent != nil })
            .flatMap({ ExpirationReason(intent: $0.expirationIntent) })
        {
            return reason
        }
        if billingIssue[index] { return .billingError }
        if !autoRenew(through: index).enabled { return .customerCancelled }
        return .unknown
    }

    /// The signed date of the latest fact `expirationReason(index)` read, or nil when the reason
    /// is only inferred: the instant a corrected reason became known.
    func expirationReasonKnownAt(_ index: Int) -> Timestamp? {
        let (windowSnapshots, windowNotifications) = window(index)
        let expiry = expires(index)
        var latest = windowNotifications.first(where: {
            $0.type == NotificationTypeV2.expired.rawValue && $0.signedDate >= expiry
                && ExpirationReason(expiredSubtype: $0.subtype) != nil
        })?.signedDate
        if latest == nil {
            latest = windowSnapshots.last(where: { ExpirationReason(intent: $0.expirationIntent) != nil })?.signedDate
        }
        if latest == nil { latest = runSnapshots(through: index).last?.signedDate }
        return latest
    }
}
