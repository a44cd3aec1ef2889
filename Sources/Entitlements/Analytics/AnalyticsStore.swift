/// The store an analytics row or period comes from: the `store` column of the aggregates
/// (migration 0016) and the `store` filter of the analytics API. Rows stored before Google
/// Play counted in analytics are App Store rows.
/// - Note: Immutable value; `Sendable`.
public enum AnalyticsStore: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    case appStore
    case googlePlay

    public static func < (lhs: AnalyticsStore, rhs: AnalyticsStore) -> Bool { lhs.rawValue < rhs.rawValue }
}
