import AppStoreModels
import Foundation

/// The filters of Get Transaction History as the query string carries them.
struct HistoryQuery: Sendable {
    var revision: String?
    var startDate: Timestamp?
    var endDate: Timestamp?
    var productIds: [String] = []
    var productTypes: [String] = []
    var descending = false
    var groupIds: [String] = []
    var ownership: InAppOwnershipType?
    var revoked: Bool?
}

/// Read side of the App Store Server API: lookups, history pages, statuses, refunds, with
/// Apple's error codes. Page size and revision tokens follow Apple (20 per page; the token is
/// opaque and moves with the data, so new transactions show up on later pages).
extension StoreState {
    static let pageSize = 20

    /// The customer a transaction id (original, any, or app transaction id) belongs to.
    func customerOf(anyTransactionId id: String, bundleId: String) throws(SimulatorError) -> String {
        guard Self.isTransactionIdShaped(id) else { throw .api(.invalidTransactionId, "Invalid transaction id.") }
        if let record = transactions[id], record.bundleId == bundleId { return record.customerId }
        if let key = appTransactionIds.first(where: { $0.value == id })?.key {
            let parts = key.split(separator: "|", maxSplits: 1).map(String.init)
            if parts.count == 2, parts[1] == bundleId { return parts[0] }
        }
        throw .api(.transactionIdNotFound, "Transaction id not found.")
    }

    func transactionInfo(_ id: String, bundleId: String) throws(SimulatorError) -> TransactionRecord {
        guard Self.isTransactionIdShaped(id) else { throw .api(.invalidTransactionId, "Invalid transaction id.") }
        guard let record = transactions[id], record.bundleId == bundleId else {
            throw .api(.transactionIdNotFound, "Transaction id not found.")
        }
        return record
    }

    /// One page of Get Transaction History. Version 2 leaves out finished consumables, as Apple
    /// documents; version 1 keeps them.
    func history(anyTransactionId id: String, bundleId: String, query: HistoryQuery, version: Int)
        throws(SimulatorError) -> (records: [TransactionRecord], revision: String, hasMore: Bool)
    {
        let customer = try customerOf(anyTransactionId: id, bundleId: bundleId)
        if let start = query.startDate, let end = query.endDate, start > end {
            throw .api(.startDateAfterEndDate, "Start date after end date.")
        }
        let matching = transactions(ofCustomer: customer).filter { record in
            guard record.bundleId == bundleId else { return false }
            if version >= 2, record.kind == .consumable, record.finished { return false }
            if let start = query.startDate, record.purchaseDate < start { return false }
            if let end = query.endDate, record.purchaseDate >= end { return false }
            if !query.productIds.isEmpty, !query.productIds.contains(record.productId) { return false }
            if !query.productTypes.isEmpty, !query.productTypes.contains(record.kind.historyFilter) { return false }
            if !query.groupIds.isEmpty, !query.groupIds.contains(record.groupId ?? "") { return false }
            if let ownership = query.ownership, record.ownership != ownership { return false }
            if let revoked = query.revoked, record.isRevoked != revoked { return false }
            return true
        }
        return try page(
            matching, key: { ($0.modifiedDate, $0.sequence) }, descending: query.descending, revision: query.revision)
    }

    /// One page of Get Refund History: refunded purchases, oldest refund first.
    func refundHistory(anyTransactionId id: String, bundleId: String, revision: String?)
        throws(SimulatorError) -> (records: [TransactionRecord], revision: String, hasMore: Bool)
    {
        let customer = try customerOf(anyTransactionId: id, bundleId: bundleId)
        let refunded = transactions(ofCustomer: customer).filter { $0.bundleId == bundleId && $0.isRefund }
        return try page(
            refunded, key: { ($0.revocationDate ?? $0.modifiedDate, $0.sequence) }, descending: false,
            revision: revision)
    }

    private func page(
        _ records: [TransactionRecord], key: (TransactionRecord) -> (Timestamp, Int), descending: Bool,
        revision: String?
    ) throws(SimulatorError) -> (records: [TransactionRecord], revision: String, hasMore: Bool) {
        func before(_ lhs: (Timestamp, Int), _ rhs: (Timestamp, Int)) -> Bool {
            lhs.0 != rhs.0 ? lhs.0 < rhs.0 : lhs.1 < rhs.1
        }
        var sorted = records.sorted { before(key($0), key($1)) }
        if descending { sorted.reverse() }
        if let revision {
            guard let cursor = RevisionToken.decode(revision) else {
                throw .api(.invalidRequestRevision, "Invalid request revision.")
            }
            sorted = sorted.filter { descending ? before(key($0), cursor) : before(cursor, key($0)) }
        }
        let slice = Array(sorted.prefix(Self.pageSize))
        let last =
            slice.last.map(key) ?? revision.flatMap(RevisionToken.decode)
            ?? (descending
                ? (Timestamp(millisecondsSince1970: .max), Int.max) : (Timestamp(millisecondsSince1970: 0), 0))
        return (slice, RevisionToken.encode(last), sorted.count > slice.count)
    }

    /// Get All Subscription Statuses: the customer's subscriptions (own and family-shared) by
    /// group, each with its latest transaction and renewal info.
    func statuses(anyTransactionId id: String, bundleId: String, filter: [Status]) throws(SimulatorError)
        -> [(groupId: String, items: [SubscriptionRecord])]
    {
        let customer = try customerOf(anyTransactionId: id, bundleId: bundleId)
        let mine = subscriptions(ofCustomer: customer).filter {
            $0.bundleId == bundleId && (filter.isEmpty || filter.contains($0.status))
        }
        let groups = Dictionary(grouping: mine, by: \.groupId)
        return groups.keys.sorted().map { group in
            (group, groups[group]!.sorted { $0.originalTransactionId < $1.originalTransactionId })
        }
    }
}

/// Opaque page cursors: base64url of `milliseconds:sequence`.
enum RevisionToken {
    static func encode(_ cursor: (Timestamp, Int)) -> String {
        let text = "\(cursor.0.millisecondsSince1970):\(cursor.1)"
        return Data(text.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ token: String) -> (Timestamp, Int)? {
        var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8) else { return nil }
        let parts = text.split(separator: ":")
        guard parts.count == 2, let milliseconds = Int64(parts[0]), let sequence = Int(parts[1]) else { return nil }
        return (Timestamp(millisecondsSince1970: milliseconds), sequence)
    }
}
