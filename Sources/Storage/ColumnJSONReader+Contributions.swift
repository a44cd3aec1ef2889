import Entitlements
import Foundation

/// A customer's stored analytics contributions read straight from the parsed document, without
/// `Decodable`: the daily entries and the cohort entries are read back at the first fact of each
/// customer not in the cache (every ingestion of the POST workload), and through the decoder
/// protocols they cost the single writer ~50 µs of each (125 of 5,367 samples).
///
/// The text must have exactly the shape the store writes (`ColumnJSON.contribution`,
/// `ColumnJSON.cohorts`): each object with its members once, no other member, keys without
/// escapes, integers as plain integers. Anything else answers `nil` and is decoded the general
/// way (`SQLStoreTransaction.decode`), so a text reads the same either way.
extension ColumnJSONReader {
    /// A daily contribution (`analytics_contributions.contribution_json`), or `nil`.
    static func contributions(from text: String) -> [SQLStoreTransaction.StoredContribution]? {
        guard let document = ColumnJSONDocument(text) else { return nil }
        do throws(ColumnJSONUnsupported) {
            return try document.elements(of: 0).map { entry throws(ColumnJSONUnsupported) in
                let members = try document.object(entry, ["key", "values"], optional: [])
                return SQLStoreTransaction.StoredContribution(
                    key: try document.dailyKey(members[0]!), values: try document.integers(members[1]!))
            }
        } catch {
            return nil
        }
    }

    /// A cohort contribution (`analytics_cohort_contributions.contribution_json`), or `nil`.
    static func cohorts(from text: String) -> SQLStoreTransaction.StoredCohortContribution? {
        guard let document = ColumnJSONDocument(text) else { return nil }
        do throws(ColumnJSONUnsupported) {
            let members = try document.object(0, ["ltv", "retention"], optional: [])
            var contribution = SQLStoreTransaction.StoredCohortContribution(CohortContribution())
            contribution.ltv = try document.elements(of: members[0]!).map { entry throws(ColumnJSONUnsupported) in
                let entry = try document.object(entry, ["key", "values"], optional: [])
                let key = try document.object(
                    entry[0]!, ["cohortMonth", "currency", "day", "productId", "storefront", "subscriptionGroup"],
                    optional: [])
                return .init(
                    key: LTVCohortKey(
                        cohortMonth: try document.day(key[0]!), productId: try document.string(key[3]!),
                        subscriptionGroup: try document.string(key[5]!), storefront: try document.string(key[4]!),
                        day: try document.day(key[2]!), currency: try document.string(key[1]!)),
                    values: try document.integers(entry[1]!))
            }
            contribution.retention = try document.elements(of: members[1]!).map {
                entry throws(ColumnJSONUnsupported) in
                let entry = try document.object(entry, ["key", "subscriptions"], optional: [])
                let key = try document.object(
                    entry[0]!, ["cohortMonth", "paidRenewals", "productId", "storefront", "subscriptionGroup"],
                    optional: [])
                return .init(
                    key: RetentionCohortKey(
                        cohortMonth: try document.day(key[0]!), productId: try document.string(key[2]!),
                        subscriptionGroup: try document.string(key[4]!), storefront: try document.string(key[3]!),
                        paidRenewals: try document.integer(key[1]!, as: Int64.self)),
                    subscriptions: try document.integer(entry[1]!, as: Int64.self))
            }
            return contribution
        } catch {
            return nil
        }
    }
}

extension ColumnJSONDocument {
    /// The element nodes of array `node`.
    func elements(of node: Int) throws(ColumnJSONUnsupported) -> [Int] {
        let array = nodes[node]
        guard array.kind == .array else { throw fail() }
        var result: [Int] = []
        result.reserveCapacity(Int(array.count))
        var element = node + 1
        for _ in 0..<array.count {
            result.append(element)
            element = Int(nodes[element].next)
        }
        return result
    }

    /// The value node of each of `names` in object `node` (`nil` for a name in `optional` that
    /// is absent); gives up on any other member, a name twice, a required one missing, or a
    /// null value.
    func object(_ node: Int, _ names: [StaticString], optional: Set<Int>) throws(ColumnJSONUnsupported) -> [Int?] {
        var values = [Int?](repeating: nil, count: names.count)
        for member in try members(of: node) {
            let length = Int(member.end - member.start)
            guard
                let position = names.firstIndex(where: { name in
                    name.utf8CodeUnitCount == length
                        && bytes.withUnsafeBufferPointer {
                            memcmp($0.baseAddress! + Int(member.start), name.utf8Start, length) == 0
                        }
                }), values[position] == nil, nodes[member.value].kind != .null
            else { throw fail() }
            values[position] = member.value
        }
        for position in names.indices where values[position] == nil && !optional.contains(position) {
            throw fail()
        }
        return values
    }

    func integers(_ node: Int) throws(ColumnJSONUnsupported) -> [Int64] {
        try elements(of: node).map { element throws(ColumnJSONUnsupported) in
            try integer(element, as: Int64.self)
        }
    }

    /// A day written as `YYYY-MM-DD` (`CalendarDay`'s coding).
    func day(_ node: Int) throws(ColumnJSONUnsupported) -> CalendarDay {
        guard let day = CalendarDay(iso8601: try string(node)) else { throw fail() }
        return day
    }

    /// A daily contribution's key (`AnalyticsDailyKey`'s coding: `store` absent for the App Store).
    func dailyKey(_ node: Int) throws(ColumnJSONUnsupported) -> AnalyticsDailyKey {
        let key = try object(
            node, ["currency", "day", "productId", "store", "storefront", "subscriptionGroup"], optional: [3])
        return AnalyticsDailyKey(
            day: try day(key[1]!), productId: try string(key[2]!), subscriptionGroup: try string(key[5]!),
            storefront: try string(key[4]!), currency: try string(key[0]!),
            store: try raw(key[3], AnalyticsStore.self) ?? .appStore)
    }
}
