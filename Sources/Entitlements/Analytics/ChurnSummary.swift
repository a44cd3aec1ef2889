import AppStoreModels

/// Churn over a period: of the paid subscriptions active at its start, those whose paid
/// service ended during it, less those that paid again in the same group before it ended,
/// over the actives at the start; the churned split by `ChurnReason`.
/// - Note: Immutable value; `Sendable`.
public struct ChurnSummary: Sendable, Hashable, Codable {
    /// One uninterrupted stretch of paid service of one subscription (customer and group).
    public struct PaidRun: Sendable, Hashable, Codable {
        public var subscription: String
        public var start: Timestamp
        public var end: Timestamp
        /// Why it ended (`nil`: not known, or it has not ended).
        public var expirationReason: ExpirationReason?

        public init(subscription: String, start: Timestamp, end: Timestamp, expirationReason: ExpirationReason?) {
            self.subscription = subscription
            self.start = start
            self.end = end
            self.expirationReason = expirationReason
        }
    }

    public var activeAtStart: Int
    public var expired: Int
    public var resubscribed: Int
    public var churned: Int
    public var byReason: [ChurnReason: Int]

    /// churned / activeAtStart, `nil` when nothing was active.
    public var rate: Ratio { Ratio(numerator: churned, denominator: activeAtStart) }

    /// Churn over `[from, to)`: the runs active at `from` and no longer at `to` (a run ending
    /// exactly at `to` expired in this period: it is not active at the next one's start).
    public init(runs: [PaidRun], from: Timestamp, to: Timestamp) {
        var runsBySubscription: [String: [PaidRun]] = [:]
        for run in runs { runsBySubscription[run.subscription, default: []].append(run) }
        var activeAtStart = 0
        var expired = 0
        var resubscribed = 0
        var byReason: [ChurnReason: Int] = [:]
        for subscriptionRuns in runsBySubscription.values {
            guard let current = subscriptionRuns.first(where: { $0.start <= from && from < $0.end }) else { continue }
            activeAtStart += 1
            guard current.end <= to else { continue }
            expired += 1
            if subscriptionRuns.contains(where: { $0.start >= current.end && $0.start <= to }) {
                resubscribed += 1
            } else {
                byReason[ChurnReason(current.expirationReason), default: 0] += 1
            }
        }
        self.activeAtStart = activeAtStart
        self.expired = expired
        self.resubscribed = resubscribed
        self.churned = expired - resubscribed
        self.byReason = byReason
    }

    /// Merges paid periods of one subscription that touch or overlap into runs; the run's
    /// expiration reason is its last period's.
    public static func runs(
        subscription: String, periods: [(start: Timestamp, end: Timestamp, expirationReason: ExpirationReason?)]
    ) -> [PaidRun] {
        var runs: [PaidRun] = []
        for period in periods.sorted(by: { $0.start < $1.start }) where period.end > period.start {
            if let last = runs.last, period.start <= last.end {
                if period.end >= last.end {
                    runs[runs.count - 1].end = period.end
                    runs[runs.count - 1].expirationReason = period.expirationReason
                }
            } else {
                runs.append(
                    PaidRun(
                        subscription: subscription, start: period.start, end: period.end,
                        expirationReason: period.expirationReason))
            }
        }
        return runs
    }
}
