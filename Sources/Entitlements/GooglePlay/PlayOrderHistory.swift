import AppStoreModels

/// The reads of one line item (one product of one purchase token), cut into orders: each
/// charge (`latestSuccessfulOrderId`) is one period, like one Apple transaction. Reads without
/// an order id (pending, or a line item that has not been charged again) belong to the order
/// before them, or to a leading uncharged group.
struct PlayOrderHistory {
    struct Entry {
        var snapshot: PlaySubscriptionFact
        var item: PlaySubscriptionLineItem

        var state: PlaySubscriptionState? { snapshot.state.value }
        var expiry: Timestamp { item.expiryTime ?? snapshot.readAt }
        /// The state gives access while the expiry lies ahead.
        var isGranting: Bool { state == .active || state == .canceled || state == .inGracePeriod }
        var isWithoutAccess: Bool {
            state == .onHold || state == .paused || state == .expired || state == .pendingPurchaseCanceled
        }
    }

    struct Order {
        /// `nil`: nothing charged yet.
        var orderId: String?
        var entries: [Entry]

        var firstRead: Timestamp { entries[0].snapshot.readAt }
        /// The furthest expiry of reads giving access outside grace: the paid period's end.
        var paidExpiry: Timestamp? {
            entries.filter { $0.state == .active || $0.state == .canceled }.map(\.expiry).max()
        }
        var graceExpiry: Timestamp? { entries.filter { $0.state == .inGracePeriod }.map(\.expiry).max() }
        var billingIssueAt: Timestamp? {
            entries.first { $0.state == .inGracePeriod || $0.state == .onHold }?.snapshot.readAt
        }
        var graceStartedAt: Timestamp? { entries.first { $0.state == .inGracePeriod }?.snapshot.readAt }
        var pausedAt: Timestamp? { entries.first { $0.state == .paused }?.snapshot.readAt }
        var holdAt: Timestamp? { entries.first { $0.state == .onHold }?.snapshot.readAt }
        var periodType: PeriodType {
            switch entries.compactMap(\.item.offerPhase).first {
            case .freeTrial?: return .trial
            case .introductoryPrice?: return .intro
            default: return entries.contains { $0.item.offerId != nil } ? .promotional : .normal
            }
        }
        var recurringPrice: Money? { entries.compactMap(\.item.recurringPrice).first }

        /// When access through this order ended or ends: the furthest expiry a granting read
        /// showed (grace included), cut short by a read without access before it.
        var accessEnd: Timestamp {
            let granted = entries.filter(\.isGranting).map(\.expiry).max()
            let lost = entries.first(where: \.isWithoutAccess)
            switch (granted, lost) {
            case (let granted?, let lost?): return min(granted, lost.snapshot.readAt)
            case (let granted?, nil): return granted
            case (nil, let lost?): return min(lost.expiry, lost.snapshot.readAt)
            case (nil, nil): return entries.last!.expiry
            }
        }
    }

    let productId: String
    let entries: [Entry]
    private(set) var orders: [Order] = []

    init(productId: String, snapshots: [PlaySubscriptionFact]) {
        self.productId = productId
        entries = snapshots.compactMap { snapshot in
            snapshot.lineItems.first { $0.productId == productId }.map { Entry(snapshot: snapshot, item: $0) }
        }
        var indexByOrder: [String: Int] = [:]
        for entry in entries {
            if let orderId = entry.item.latestSuccessfulOrderId {
                if let index = indexByOrder[orderId] {
                    orders[index].entries.append(entry)
                } else {
                    indexByOrder[orderId] = orders.count
                    orders.append(Order(orderId: orderId, entries: [entry]))
                }
            } else if orders.isEmpty {
                orders.append(Order(orderId: nil, entries: [entry]))
            } else {
                orders[orders.count - 1].entries.append(entry)
            }
        }
        // An uncharged leading group followed by a charge is the same purchase being paid.
        if orders.count > 1, orders[0].orderId == nil {
            orders[1].entries = orders[0].entries + orders[1].entries
            orders.removeFirst()
        }
    }

    var charged: [Order] { orders.filter { $0.orderId != nil } }

    /// When order `index` began: the first one at the token's `startTime`; a renewal at the
    /// previous paid period's end (or when it was first read, if earlier); a recovery or a
    /// resumption when it was first read, since the charge came then.
    func start(_ index: Int) -> Timestamp {
        let order = orders[index]
        if index == 0 { return order.entries.compactMap(\.snapshot.startTime).min() ?? order.firstRead }
        let previous = orders[index - 1]
        if previous.billingIssueAt != nil || previous.pausedAt != nil { return order.firstRead }
        return min(previous.paidExpiry ?? order.firstRead, order.firstRead)
    }
}
