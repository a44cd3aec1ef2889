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

    /// `milliunits × numerator / denominator`, rounded half away from zero; saturates at the
    /// ends of `Int64` (only absurd amounts get there: a share or a month factor never does)
    /// rather than trap and take the server down.
    func scaled(by numerator: Int64, over denominator: Int64) -> Money {
        let rounded =
            Self.scaledExactly(milliunits, by: numerator, over: denominator)
            ?? ((milliunits < 0) != (numerator < 0) ? Int64.min : Int64.max)
        return Money(milliunits: rounded, currency: currency)
    }

    /// `value × numerator / denominator` (`denominator` > 0), rounded half away from zero, with a
    /// 128-bit intermediate product; `nil` when the result does not fit in `Int64`. An amount
    /// times an exchange rate in millionths overflows 64 bits long before the converted amount
    /// does (USD 576,000 of MRR at 16,000 IDR to the dollar).
    public static func scaledExactly(_ value: Int64, by numerator: Int64, over denominator: Int64) -> Int64? {
        precondition(denominator > 0, "a positive denominator")
        let divisor = UInt64(denominator)
        var product = value.magnitude.multipliedFullWidth(by: numerator.magnitude)
        let (low, carry) = product.low.addingReportingOverflow(divisor / 2)
        product.low = low
        if carry { product.high += 1 }
        guard product.high < divisor else { return nil }
        let magnitude = divisor.dividingFullWidth(product).quotient
        let negative = (value < 0) != (numerator < 0) && magnitude != 0
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return Int64(magnitude)
    }
}
