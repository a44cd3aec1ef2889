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
    /// `nil` over 0.
    public var tenThousandths: Int? {
        guard denominator != 0 else { return nil }
        let magnitude = (abs(numerator) * 20_000 + abs(denominator)) / (2 * abs(denominator))
        return (numerator < 0) != (denominator < 0) ? -magnitude : magnitude
    }

    /// `0.2500`-style value, `nil` over 0.
    public var decimal: Double? { tenThousandths.map { Double($0) / 10_000 } }
}
