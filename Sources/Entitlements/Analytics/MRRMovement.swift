/// How one subscription's MRR (in one currency) moved between two instants, in the five
/// movements analytics reports. For every subscription,
/// `after − before = new + expansion − contraction − churned + reactivation`, so the sums over
/// subscriptions reconcile with the MRR figures exactly.
///
/// - new: from 0 to a positive MRR, never paid before;
/// - reactivation: from 0 to a positive MRR after an earlier paid period;
/// - expansion / contraction: from a positive MRR to a higher / lower positive one;
/// - churned: from a positive MRR to 0 (the MRR lost).
/// - Note: Immutable value; `Sendable`.
public struct MRRMovement: Sendable, Hashable, Codable {
    public var new: Int64 = 0
    public var expansion: Int64 = 0
    public var contraction: Int64 = 0
    public var churned: Int64 = 0
    public var reactivation: Int64 = 0

    public init(
        new: Int64 = 0, expansion: Int64 = 0, contraction: Int64 = 0, churned: Int64 = 0, reactivation: Int64 = 0
    ) {
        self.new = new
        self.expansion = expansion
        self.contraction = contraction
        self.churned = churned
        self.reactivation = reactivation
    }

    /// The movement from `before` to `after` (both ≥ 0); `paidBefore` says whether the
    /// subscription had a positive MRR at any earlier instant.
    public init(before: Int64, after: Int64, paidBefore: Bool) {
        if before == 0, after > 0 {
            if paidBefore { reactivation = after } else { new = after }
        } else if before > 0, after == 0 {
            churned = before
        } else if after > before {
            expansion = after - before
        } else if after < before {
            contraction = before - after
        }
    }

    /// new + expansion − contraction − churned + reactivation: the change it explains.
    public var net: Int64 { new + expansion - contraction - churned + reactivation }
}
