import AppStoreModels

/// A move between products of one subscription group.
///
/// Apple applies an upgrade (and a crossgrade of equal duration) at once, and a downgrade (or
/// crossgrade of different duration) at the next renewal.
/// - Note: Immutable value; `Sendable`.
public struct ProductChange: Sendable, Hashable, Codable {
    /// Direction of the change within the group's service levels.
    public enum Kind: String, Sendable, Hashable, Codable {
        case upgrade = "UPGRADE"
        case downgrade = "DOWNGRADE"
        case crossgrade = "CROSSGRADE"
    }

    /// When the change takes effect.
    public enum Timing: String, Sendable, Hashable, Codable {
        case immediate = "IMMEDIATE"
        case atNextRenewal = "AT_NEXT_RENEWAL"
    }

    public var fromProductId: String
    public var toProductId: String
    public var kind: Kind
    public var timing: Timing
    /// When the new product starts (the upgrade's purchase date, or the renewal date).
    public var effectiveAt: Timestamp
    /// `true` on the event of a scheduled change the customer took back before it took effect
    /// (`toProductId` names the product that will not come); absent otherwise.
    public var isWithdrawn: Bool?

    public init(fromProductId: String, toProductId: String, kind: Kind, timing: Timing, effectiveAt: Timestamp) {
        self.fromProductId = fromProductId
        self.toProductId = toProductId
        self.kind = kind
        self.timing = timing
        self.effectiveAt = effectiveAt
    }

    /// Classifies by Apple's group levels (1 = highest); with a level missing, by timing:
    /// Apple only applies upgrades and equal-duration crossgrades immediately.
    static func classify(
        from: CatalogProduct?, to: CatalogProduct?, timing: Timing
    ) -> Kind {
        if let fromLevel = from?.groupLevel, let toLevel = to?.groupLevel {
            if toLevel < fromLevel { return .upgrade }
            if toLevel > fromLevel { return .downgrade }
            return .crossgrade
        }
        if let fromDuration = from?.duration, let toDuration = to?.duration,
            fromDuration.approximateDays != toDuration.approximateDays, timing == .atNextRenewal
        {
            return .crossgrade
        }
        return timing == .immediate ? .upgrade : .downgrade
    }
}
