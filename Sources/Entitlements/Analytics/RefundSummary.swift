import AppStoreModels

/// Refunds dated in a period, by Apple's reason, with the refund rate (refunded paid
/// transactions over the paid transactions purchased in the period). Family Sharing
/// revocations are counted apart and are never refunds.
/// - Note: Immutable value; `Sendable`.
public struct RefundSummary: Sendable, Hashable, Codable {
    /// Refunded amounts of one currency.
    public struct Amounts: Sendable, Hashable, Codable {
        public var currency: String
        public var developerIssue: Int64 = 0
        public var other: Int64 = 0
        public var total: Int64 { developerIssue + other }
    }

    public var count = 0
    public var developerIssue = 0
    /// Apple's code 0, or no reason given.
    public var other = 0
    /// Sorted by currency.
    public var amounts: [Amounts] = []
    /// Paid transactions purchased in the period (the refund rate's denominator).
    public var paidTransactions = 0
    public var familyRevocations = 0

    public var refundRate: Ratio { Ratio(numerator: count, denominator: paidTransactions) }

    /// Over `[from, to)`. `familyRevocationDates` are the revocation dates of family-shared
    /// access (their transactions carry no money).
    public init(of all: [TransactionProceeds], familyRevocationDates: [Timestamp], from: Timestamp, to: Timestamp) {
        var byCurrency: [String: Amounts] = [:]
        for transaction in all where transaction.isPaid {
            if from <= transaction.purchaseDate && transaction.purchaseDate < to { paidTransactions += 1 }
            guard let refundedAt = transaction.refundedAt, from <= refundedAt, refundedAt < to else { continue }
            count += 1
            let isDeveloperIssue = transaction.refundReason == .developerIssue
            if isDeveloperIssue { developerIssue += 1 } else { other += 1 }
            guard let currency = transaction.currency else { continue }
            var amounts = byCurrency[currency] ?? Amounts(currency: currency)
            if isDeveloperIssue {
                amounts.developerIssue += transaction.refunded
            } else {
                amounts.other += transaction.refunded
            }
            byCurrency[currency] = amounts
        }
        amounts = byCurrency.keys.sorted().map { byCurrency[$0]! }
        familyRevocations = familyRevocationDates.filter { from <= $0 && $0 < to }.count
    }
}
