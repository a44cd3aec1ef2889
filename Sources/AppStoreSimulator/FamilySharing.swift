import AppStoreModels
import Foundation

/// Family Sharing: family members get their own copies (own ids, `FAMILY_SHARED`) of the
/// shareable purchases of the others, follow the purchaser's subscription, and lose access with
/// `REVOKE` when sharing stops.
extension StoreState {
    func familyMembers(of customerId: String) -> [SimulatedCustomer] {
        guard let group = customers[customerId]?.familyGroup else { return [] }
        return customers.values.filter { $0.familyGroup == group && $0.id != customerId }.sorted { $0.id < $1.id }
    }

    /// Gives every family member of the purchaser a copy of `transaction`.
    mutating func shareWithFamily(_ transaction: TransactionRecord, now: Timestamp) {
        for member in familyMembers(of: transaction.customerId) {
            share(transaction, with: member.id, now: now)
        }
    }

    private mutating func share(_ source: TransactionRecord, with member: String, now: Timestamp) {
        guard source.customerId != member, !source.isRevoked,
            !transactions.values.contains(where: {
                $0.customerId == member && $0.familySourceTransactionId == source.transactionId && !$0.isRevoked
            })
        else { return }
        if source.kind == .autoRenewable {
            guard let sourceSubscription = subscriptions[source.originalTransactionId], sourceSubscription.isLive,
                sourceSubscription.latestTransactionId == source.transactionId,
                !subscriptions.values.contains(where: {
                    $0.customerId == member && $0.familySource == source.originalTransactionId
                        && $0.status != .revoked
                })
            else { return }
            let copy = familyCopy(of: source, for: member, originalTransactionId: nil, now: now)
            var subscription = sourceSubscription
            subscription.originalTransactionId = copy.originalTransactionId
            subscription.customerId = member
            subscription.ownership = .familyShared
            subscription.familySource = source.originalTransactionId
            subscription.latestTransactionId = copy.transactionId
            subscription.appAccountToken = nil
            subscription.extensionDates = []
            subscription.recentSubscriptionStartDate = now
            subscriptions[copy.originalTransactionId] = subscription
            emit(.subscribed, .initialBuy, transactionId: copy.transactionId, now: now)
        } else {
            let copy = familyCopy(of: source, for: member, originalTransactionId: nil, now: now)
            emit(.oneTimeCharge, transactionId: copy.transactionId, now: now)
        }
    }

    /// A family member's copy of a purchaser's transaction.
    @discardableResult
    private mutating func familyCopy(
        of source: TransactionRecord, for member: String, originalTransactionId: String?, now: Timestamp
    ) -> TransactionRecord {
        let id = nextNumericId()
        var copy = source
        copy.transactionId = id
        copy.originalTransactionId = originalTransactionId ?? id
        copy.webOrderLineItemId = source.webOrderLineItemId == nil ? nil : nextNumericId()
        copy.customerId = member
        copy.ownership = .familyShared
        copy.appAccountToken = nil
        copy.appTransactionId = appTransactionId(customer: member, bundleId: source.bundleId, now: now)
        copy.familySourceTransactionId = source.transactionId
        copy.modifiedDate = now
        copy.sequence = nextSequence()
        copy.orderId = source.orderId
        if originalTransactionId == nil { copy.originalPurchaseDate = source.purchaseDate }
        return record(copy)
    }

    /// Applies a purchaser's subscription change to every family copy and notifies the member
    /// with the same type and subtype.
    mutating func mirrorToFamily(
        _ source: SubscriptionRecord, _ type: NotificationTypeV2, _ subtype: Subtype?,
        newTransaction: TransactionRecord?, now: Timestamp
    ) {
        guard source.familySource == nil else { return }
        let copies = subscriptions.values
            .filter { $0.familySource == source.originalTransactionId && $0.status != .revoked }
            .sorted { $0.originalTransactionId < $1.originalTransactionId }
        for var copy in copies {
            copy.productId = source.productId
            copy.autoRenewProductId = source.autoRenewProductId
            copy.autoRenew = source.autoRenew
            copy.expiresDate = source.expiresDate
            copy.status = source.status
            copy.expirationIntent = source.expirationIntent
            copy.gracePeriodExpiresDate = source.gracePeriodExpiresDate
            copy.billingRetryEndsAt = source.billingRetryEndsAt
            copy.renewalOffer = source.renewalOffer
            if let newTransaction {
                let memberCopy = familyCopy(
                    of: newTransaction, for: copy.customerId, originalTransactionId: copy.originalTransactionId,
                    now: now)
                copy.latestTransactionId = memberCopy.transactionId
            }
            subscriptions[copy.originalTransactionId] = copy
            emit(type, subtype, transactionId: copy.latestTransactionId, now: now)
        }
    }

    /// The customer joins a family group: they get the others' shareable purchases and share
    /// theirs.
    mutating func joinFamily(customer id: String, group: String, now: Timestamp) throws(SimulatorError) {
        var customer = try customer(id)
        customer.familyGroup = group
        customers[id] = customer
        for member in familyMembers(of: id) {
            for source in shareableLatest(of: member.id) { share(source, with: id, now: now) }
            for source in shareableLatest(of: id) { share(source, with: member.id, now: now) }
        }
    }

    /// The customer leaves their family group: copies they hold and copies others hold of their
    /// purchases are revoked.
    mutating func leaveFamily(customer id: String, now: Timestamp) throws(SimulatorError) {
        var customer = try customer(id)
        let members = Set(familyMembers(of: id).map(\.id))
        let held = transactions.values.filter { $0.customerId == id && $0.familySourceTransactionId != nil }
        let given = transactions.values.filter { copy in
            members.contains(copy.customerId)
                && copy.familySourceTransactionId.flatMap { transactions[$0]?.customerId } == id
        }
        customer.familyGroup = nil
        customers[id] = customer
        revokeFamilyCopies(held + given, now: now)
    }

    /// The purchaser stops sharing a product (or it was refunded): every family copy of it is
    /// revoked.
    mutating func stopSharing(customer id: String, productId: String, now: Timestamp) throws(SimulatorError) {
        _ = try customer(id)
        let copies = transactions.values.filter { copy in
            copy.productId == productId
                && copy.familySourceTransactionId.flatMap { transactions[$0]?.customerId } == id
        }
        guard !copies.isEmpty else { throw SimulatorError(.invalidAction, "\(id) shares no \(productId)") }
        revokeFamilyCopies(copies, now: now)
    }

    /// Revokes the latest copy of each family-shared purchase among `copies` with `REVOKE`.
    mutating func revokeFamilyCopies(_ copies: [TransactionRecord], now: Timestamp) {
        var done: Set<String> = []
        for copy in copies.sorted(by: { $0.sequence > $1.sequence }) where !copy.isRevoked {
            guard done.insert(copy.originalTransactionId).inserted else { continue }
            var revoked = copy
            if revoked.kind == .autoRenewable, let subscription = subscriptions[copy.originalTransactionId] {
                revoked = transactions[subscription.latestTransactionId] ?? copy
            }
            revoked.revocationDate = now
            revoked.revocationReason = .other
            revoked.revocationType = .familyRevoke
            revoked.modifiedDate = now
            transactions[revoked.transactionId] = revoked
            if var subscription = subscriptions[revoked.originalTransactionId], revoked.kind == .autoRenewable {
                subscription.status = .revoked
                subscriptions[subscription.originalTransactionId] = subscription
            }
            emit(.revoke, transactionId: revoked.transactionId, now: now)
        }
    }

    /// The customer's own shareable purchases that a family member could receive now.
    private func shareableLatest(of customerId: String) -> [TransactionRecord] {
        orderedTransactions { record in
            guard record.customerId == customerId, record.ownership == .purchased, !record.isRevoked,
                let product = apps[record.bundleId]?.product(record.productId), product.familyShareable
            else { return false }
            if record.kind == .autoRenewable {
                return subscriptions[record.originalTransactionId]?.latestTransactionId == record.transactionId
            }
            return record.kind == .nonConsumable
        }
    }
}
