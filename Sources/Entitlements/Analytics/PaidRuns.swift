import AppStoreModels

/// A customer's paid runs: per subscription, paid periods that touch or overlap merged into
/// uninterrupted stretches (as `ChurnSummary.runs` merges them), each carried by the period with
/// the latest end, with the next run's start and why the run ended.
///
/// The reason: the `EXPIRED` notification of the carrier's original transaction signed at or
/// after the run's end (and before the next run); else, for the subscription's last run, the
/// latest renewal info (its `expirationIntent`, a billing retry, auto-renew off); else unknown.
/// - Note: Immutable value; `Sendable`.
struct PaidRuns: Sendable {
    struct Entry: Sendable {
        /// Index of the carrying period.
        var carrier: Int
        var value: AnalyticsPeriod.Run
    }

    var runs: [Entry] = []

    /// - Parameters:
    ///   - paid: indices of the paid periods in `periods`.
    ///   - originals: the original transaction id of each period's transaction.
    ///   - renewals: the latest renewal info per original transaction id.
    init(
        periods: [AnalyticsPeriod], paid: [Int], originals: [String: String], renewals: [String: RenewalFact],
        notifications: [NotificationFact]
    ) {
        var bySubscription: [String: [Int]] = [:]
        // Per store too: a customer paying on both stores has two subscriptions, each churning
        // on its own (so the per-store figures add up to the combined ones).
        for index in paid {
            bySubscription[periods[index].store.rawValue + "\u{0}" + periods[index].subscription, default: []]
                .append(index)
        }
        for subscription in bySubscription.keys.sorted() {
            let members = bySubscription[subscription]!.sorted {
                (periods[$0].start, periods[$0].transactionId) < (periods[$1].start, periods[$1].transactionId)
            }
            var merged: [(start: Timestamp, end: Timestamp, carrier: Int)] = []
            for index in members {
                let period = periods[index]
                if let last = merged.last, period.start <= last.end {
                    if period.end >= last.end { merged[merged.count - 1] = (last.start, period.end, index) }
                } else {
                    merged.append((period.start, period.end, index))
                }
            }
            for (position, run) in merged.enumerated() {
                let next = position + 1 < merged.count ? merged[position + 1].start : nil
                let original = originals[periods[run.carrier].transactionId]
                let expired = notifications.filter { notification in
                    notification.type == NotificationTypeV2.expired.rawValue
                        && notification.originalTransactionId == original && notification.signedDate >= run.end
                        && (next.map { notification.signedDate < $0 } ?? true)
                }.min { $0.signedDate < $1.signedDate }
                var reason = expired.flatMap { ExpirationReason(expiredSubtype: $0.subtype) }.map { ChurnReason($0) }
                if reason == nil, next == nil, let original, let renewal = renewals[original] {
                    if let intent = ExpirationReason(intent: renewal.expirationIntent) {
                        reason = ChurnReason(intent)
                    } else if renewal.isInBillingRetryPeriod {
                        reason = .involuntary
                    } else if renewal.autoRenewEnabled == false {
                        reason = .voluntary
                    }
                }
                runs.append(
                    Entry(
                        carrier: run.carrier,
                        value: AnalyticsPeriod.Run(start: run.start, nextStart: next, reason: reason)))
            }
        }
    }
}
