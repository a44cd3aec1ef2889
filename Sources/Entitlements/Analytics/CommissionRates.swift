/// Apple's two commission rates in one storefront, in basis points (3000 = 30 %).
///
/// `standard` applies by default; `reduced` to Small Business Program members and to
/// subscribers past one year of paid service.
/// - Note: Immutable value; `Sendable`.
public struct CommissionRates: Sendable, Hashable, Codable {
    public var standard: Int
    public var reduced: Int

    /// Apple's rates in most storefronts: 30 % and 15 %.
    public static let apple = CommissionRates(standard: 3000, reduced: 1500)

    public init(standard: Int, reduced: Int) {
        self.standard = standard
        self.reduced = reduced
    }

    /// Both rates between 0 and 100 % and the reduced rate not above the standard one.
    public var isValid: Bool { (0...10_000).contains(standard) && (0...standard).contains(reduced) }
}
