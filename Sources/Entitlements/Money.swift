/// An amount in milliunits of a currency, as Apple sends prices (`10990` USD = 10.99 USD).
///
/// Integer milliunits keep revenue sums exact; no floating point touches money.
/// - Note: Immutable value; `Sendable`.
public struct Money: Sendable, Hashable, Codable, CustomStringConvertible {
    public var milliunits: Int64
    /// ISO 4217 code (`USD`).
    public var currency: String

    public init(milliunits: Int64, currency: String) {
        self.milliunits = milliunits
        self.currency = currency
    }

    public var description: String {
        let sign = milliunits < 0 ? "-" : ""
        let magnitude = milliunits.magnitude
        let fraction = String(magnitude % 1000)
        return "\(sign)\(magnitude / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction) \(currency)"
    }

    /// `milliunits × numerator / denominator`, rounded half away from zero.
    func scaled(by numerator: Int64, over denominator: Int64) -> Money {
        let product = milliunits * numerator
        let half = denominator / 2
        let rounded = product >= 0 ? (product + half) / denominator : -((-product + half) / denominator)
        return Money(milliunits: rounded, currency: currency)
    }
}
