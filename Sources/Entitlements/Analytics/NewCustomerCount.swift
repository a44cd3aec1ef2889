import AppStoreModels

/// New customers of a period: customers whose first purchase falls in it. Several app user
/// ids (aliases) or purchases of one customer count once, at the earliest.
/// - Note: Stateless; `Sendable`.
public enum NewCustomerCount {
    /// - Parameter purchases: (customer the app user id resolves to, purchase date), any number
    ///   per customer.
    public static func count(purchases: [(customer: String, purchaseDate: Timestamp)], from: Timestamp, to: Timestamp)
        -> Int
    {
        var first: [String: Timestamp] = [:]
        for purchase in purchases {
            first[purchase.customer] = min(first[purchase.customer] ?? purchase.purchaseDate, purchase.purchaseDate)
        }
        return first.values.filter { from <= $0 && $0 < to }.count
    }
}
