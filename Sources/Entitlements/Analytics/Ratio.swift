/// A share as analytics reports it: exact counts, and the decimal rounded to 4 places.
/// - Note: Immutable value; `Sendable`.
public struct Ratio: Sendable, Hashable, Codable {
    public var numerator: Int
    public var denominator: Int

    public init(numerator: Int, denominator: Int) {
        self.numerator = numerator
        self.denominator = denominator
    }

    /// Ten-thousandths, rounded half away from zero in integers (so every platform agrees);
    /// `nil` over 0, or when the value does not fit in `Int`.
    public var tenThousandths: Int? {
        guard denominator != 0, denominator != Int.min else { return nil }
        // 128-bit intermediate: a change between two large money totals × 20,000 can pass 64 bits.
        let divisor = 2 * UInt64(denominator.magnitude)
        var product = UInt64(numerator.magnitude).multipliedFullWidth(by: 20_000)
        let (low, carry) = product.low.addingReportingOverflow(UInt64(denominator.magnitude))
        product.low = low
        if carry { product.high += 1 }
        guard product.high < divisor else { return nil }
        let quotient = divisor.dividingFullWidth(product).quotient
        guard quotient <= UInt64(Int.max) else { return nil }
        let magnitude = Int(quotient)
        return (numerator < 0) != (denominator < 0) ? -magnitude : magnitude
    }

    /// `0.2500`-style value, `nil` over 0.
    public var decimal: Double? { tenThousandths.map { Double($0) / 10_000 } }
}
