/// Monthly recurring revenue: each active paid subscription's price normalised to a month,
/// rounded half away from zero to a milliunit, summed per currency. Trials and family-shared
/// periods are not in it; ARR is 12 × MRR.
/// - Note: Stateless; `Sendable`.
public enum MonthlyRecurringRevenue {
    /// One currency's MRR, gross and after commission.
    public struct Figure: Sendable, Hashable, Codable {
        public var currency: String
        public var gross: Int64
        public var proceeds: Int64

        public init(currency: String, gross: Int64, proceeds: Int64) {
            self.currency = currency
            self.gross = gross
            self.proceeds = proceeds
        }

        public var annualGross: Int64 { gross * 12 }
        public var annualProceeds: Int64 { proceeds * 12 }
    }

    /// The factor that turns a price per `period` into a price per month, as a fraction:
    /// P1W ×4, P2W ×2, P1M ×1, P2M ×1/2, P3M ×1/3, P6M ×1/6, P1Y ×1/12, any other × 30 / days.
    public static func monthlyFactor(of period: SubscriptionPeriod) -> (numerator: Int64, denominator: Int64) {
        switch (period.value, period.unit) {
        case (1, .week): return (4, 1)
        case (2, .week): return (2, 1)
        case (1, .month): return (1, 1)
        case (2, .month): return (1, 2)
        case (3, .month): return (1, 3)
        case (6, .month): return (1, 6)
        case (1, .year): return (1, 12)
        default:
            let daysPerUnit: Int64
            switch period.unit {
            case .day: daysPerUnit = 1
            case .week: daysPerUnit = 7
            case .month: daysPerUnit = 30
            case .year: daysPerUnit = 365
            }
            return (30, Int64(period.value) * daysPerUnit)
        }
    }

    /// `amount` per `period` as an amount per month, rounded half away from zero.
    public static func monthly(_ amount: Int64, per period: SubscriptionPeriod) -> Int64 {
        let factor = monthlyFactor(of: period)
        return ProceedsCalculator.scaled(amount, by: factor.numerator, over: factor.denominator)
    }

    /// MRR of the given active paid subscriptions (their current transactions and durations),
    /// sorted by currency. Transactions without a currency or that are not paid are skipped.
    public static func figures(of active: [(transaction: TransactionProceeds, duration: SubscriptionPeriod)])
        -> [Figure]
    {
        var byCurrency: [String: Figure] = [:]
        for (transaction, duration) in active where transaction.isPaid {
            guard let currency = transaction.currency else { continue }
            var figure = byCurrency[currency] ?? Figure(currency: currency, gross: 0, proceeds: 0)
            figure.gross += monthly(transaction.gross, per: duration)
            figure.proceeds += monthly(transaction.proceeds, per: duration)
            byCurrency[currency] = figure
        }
        return byCurrency.keys.sorted().map { byCurrency[$0]! }
    }
}
