import AppStoreModels

/// Revenue of one currency over a period: paid transactions **purchased** in it (gross,
/// proceeds), what refunds took back from those same transactions (so a closed period changes
/// when a refund arrives later), and refunds dated in the period whatever the purchase date.
/// - Note: Immutable value; `Sendable`.
public struct RevenueSummary: Sendable, Hashable, Codable {
    public var currency: String
    public var transactions: Int = 0
    public var gross: Int64 = 0
    public var proceeds: Int64 = 0
    /// Refunded from the transactions purchased in the period.
    public var refunded: Int64 = 0
    public var refundedProceeds: Int64 = 0
    /// Refunds whose refund date is in the period.
    public var refundedOnDate: Int64 = 0

    public init(currency: String) { self.currency = currency }

    public var net: Int64 { gross - refunded }
    public var netProceeds: Int64 { proceeds - refundedProceeds }

    /// Summaries over `[from, to)` per currency, sorted by currency; family-shared and trial
    /// transactions and those without a currency are not revenue.
    public static func summaries(of all: [TransactionProceeds], from: Timestamp, to: Timestamp) -> [RevenueSummary] {
        var byCurrency: [String: RevenueSummary] = [:]
        for transaction in all where transaction.isPaid {
            guard let currency = transaction.currency else { continue }
            var summary = byCurrency[currency] ?? RevenueSummary(currency: currency)
            var touched = false
            if from <= transaction.purchaseDate && transaction.purchaseDate < to {
                summary.transactions += 1
                summary.gross += transaction.gross
                summary.proceeds += transaction.proceeds
                summary.refunded += transaction.refunded
                summary.refundedProceeds += transaction.refundedProceeds
                touched = true
            }
            if let refundedAt = transaction.refundedAt, from <= refundedAt, refundedAt < to {
                summary.refundedOnDate += transaction.refunded
                touched = true
            }
            if touched { byCurrency[currency] = summary }
        }
        return byCurrency.keys.sorted().map { byCurrency[$0]! }
    }
}
