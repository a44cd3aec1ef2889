import AppStoreModels
import Foundation

/// Refund requests and their outcomes: consumption request, refund (full or prorated, for a
/// developer issue or another reason), refund declined, refund reversed.
extension StoreState {
    /// The customer asked Apple for a refund; Apple asks the developer for consumption data.
    mutating func requestRefund(transactionId: String, reason: ConsumptionRequestReason, now: Timestamp)
        throws(SimulatorError)
    {
        let record = try transaction(transactionId)
        guard !record.isRevoked else { throw SimulatorError(.invalidAction, "\(transactionId) is already refunded") }
        emit(.consumptionRequest, transactionId: transactionId, now: now, consumptionRequestReason: reason)
    }

    /// Apple refunds the transaction. `percentage` (1...99) makes it prorated.
    mutating func refund(
        transactionId: String, reason: RevocationReason, percentage: Int?, now: Timestamp
    ) throws(SimulatorError) {
        var record = try transaction(transactionId)
        guard !record.isRevoked else { throw SimulatorError(.invalidAction, "\(transactionId) is already refunded") }
        guard record.ownership == .purchased else {
            throw SimulatorError(.invalidAction, "only the purchaser's transaction can be refunded")
        }
        record.revocationDate = now
        record.revocationReason = reason
        if let percentage, percentage > 0, percentage < 100 {
            record.revocationType = .refundProrated
            record.revocationPercentage = Int32(percentage * 1000)
        } else {
            record.revocationType = .refundFull
        }
        record.modifiedDate = now
        transactions[transactionId] = record
        if record.kind == .autoRenewable, var subscription = subscriptions[record.originalTransactionId],
            subscription.latestTransactionId == transactionId
        {
            subscription.status = .revoked
            subscriptions[subscription.originalTransactionId] = subscription
        }
        emit(.refund, transactionId: transactionId, now: now)
        let copies = transactions.values.filter { $0.familySourceTransactionId == transactionId }
        revokeFamilyCopies(copies, now: now)
    }

    mutating func declineRefund(transactionId: String, now: Timestamp) throws(SimulatorError) {
        let record = try transaction(transactionId)
        guard !record.isRevoked else { throw SimulatorError(.invalidAction, "\(transactionId) is already refunded") }
        emit(.refundDeclined, transactionId: transactionId, now: now)
    }

    /// Apple reverses a refund it granted (e.g. a chargeback dispute won): access returns.
    mutating func reverseRefund(transactionId: String, now: Timestamp) throws(SimulatorError) {
        var record = try transaction(transactionId)
        guard record.isRefund else { throw SimulatorError(.invalidAction, "\(transactionId) is not refunded") }
        record.revocationDate = nil
        record.revocationReason = nil
        record.revocationType = nil
        record.revocationPercentage = nil
        record.modifiedDate = now
        transactions[transactionId] = record
        if record.kind == .autoRenewable, var subscription = subscriptions[record.originalTransactionId],
            subscription.latestTransactionId == transactionId
        {
            subscription.status = subscription.expiresDate > now ? .active : .expired
            if subscription.status == .expired { subscription.expirationIntent = .other }
            subscriptions[subscription.originalTransactionId] = subscription
        }
        emit(.refundReversed, transactionId: transactionId, now: now)
    }

    /// Finish Transaction: a finished consumable leaves history v2 and the app receipt.
    mutating func finish(transactionId: String) throws(SimulatorError) {
        var record = try transaction(transactionId)
        record.finished = true
        transactions[transactionId] = record
    }
}
