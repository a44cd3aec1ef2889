import AppStoreModels

/// What became of a free trial: converted (a paid period of the same subscription followed
/// it), pending (not ended, auto-renew on), or abandoned (ended unpaid, or auto-renew turned
/// off before the end).
/// - Note: Immutable value; `Sendable`.
public enum TrialOutcome: String, Sendable, Hashable, Codable, CaseIterable {
    case converted = "CONVERTED"
    case pending = "PENDING"
    case abandoned = "ABANDONED"

    /// - Parameters:
    ///   - trial: the free-trial transaction.
    ///   - subscription: the latest versions of the transactions sharing its
    ///     `originalTransactionId`.
    ///   - autoRenewOn: the renewal info's auto-renew status, `nil` when none was received.
    public static func of(
        trial: TransactionFact, subscription: [TransactionFact], autoRenewOn: Bool?, at instant: Timestamp
    ) -> TrialOutcome {
        let paidAfter = subscription.contains {
            $0.originalTransactionId == trial.originalTransactionId && $0.purchaseDate >= trial.purchaseDate
                && $0.periodType != .trial && $0.ownership != .familyShared && $0.transactionId != trial.transactionId
        }
        if paidAfter { return .converted }
        let end = trial.revocationDate.map { min($0, trial.expiresDate ?? $0) } ?? trial.expiresDate
        if let end, instant < end, autoRenewOn != false { return .pending }
        return .abandoned
    }
}

/// Trial conversion of the trials started in a period.
/// - Note: Immutable value; `Sendable`.
public struct TrialConversion: Sendable, Hashable, Codable {
    public var started: Int
    public var converted: Int
    public var pending: Int
    public var abandoned: Int

    public init(outcomes: [TrialOutcome]) {
        started = outcomes.count
        converted = outcomes.filter { $0 == .converted }.count
        pending = outcomes.filter { $0 == .pending }.count
        abandoned = outcomes.filter { $0 == .abandoned }.count
    }

    /// converted / started.
    public var rate: Ratio { Ratio(numerator: converted, denominator: started) }
}
