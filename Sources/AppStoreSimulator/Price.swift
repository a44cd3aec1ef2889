/// A price in one storefront, in milliunits of its currency as Apple signs it (9990 = 9.99).
/// - Note: Immutable value; `Sendable`.
public struct Price: Sendable, Hashable, Codable {
    /// Apple's three-letter storefront country code (`USA`, `FRA`).
    public var storefront: String
    /// ISO 4217 code (`USD`, `EUR`).
    public var currency: String
    public var price: Int64

    public init(storefront: String, currency: String, price: Int64) {
        self.storefront = storefront
        self.currency = currency
        self.price = price
    }
}

extension [Price] {
    /// The price for `storefront`, else the first listed (a catalog with one price list serves
    /// every storefront).
    func price(for storefront: String) -> Price? {
        first { $0.storefront == storefront } ?? first
    }
}
