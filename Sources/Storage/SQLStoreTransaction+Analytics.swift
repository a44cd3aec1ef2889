import AppStoreModels
import Entitlements

/// Analytics: settings, per-customer contributions and the daily aggregates (migrations 0012,
/// 0015, 0016).
extension SQLStoreTransaction {
    /// One entry of a stored contribution: the key and the values in `AnalyticsMeasures.columns`
    /// order.
    struct StoredContribution: Codable {
        var key: AnalyticsDailyKey
        var values: [Int64]
    }

    private static let measureColumns = AnalyticsMeasures.columns.joined(separator: ", ")
    private static let summedColumns = AnalyticsMeasures.columns.map { "SUM(\($0))" }.joined(separator: ", ")

    /// Decoded analytics settings by app: every ingestion reads its app's.
    static let analyticsSettingsCache = StoredTextCache<String, AnalyticsSettings>(
        byteBudget: 16 << 20, capacity: 1_024)

    func analyticsSettings(appId: String) throws -> StoredAnalyticsSettings? {
        try row("SELECT settings_json, version FROM analytics_settings WHERE app_id = $1", .text(appId)).map {
            row throws(StoreError) in
            StoredAnalyticsSettings(
                settings: try Self.analyticsSettingsCache.value(appId, text: try row.text(0)) {
                    text throws(StoreError) in
                    try Self.decode(AnalyticsSettings.self, text, column: "analytics_settings.settings_json")
                }, version: try row.integer(1))
        }
    }

    func saveAnalyticsSettings(appId: String, _ settings: AnalyticsSettings, at: Timestamp) throws -> Int64 {
        let saved = try rows(
            """
            INSERT INTO analytics_settings (app_id, settings_json, updated_at) VALUES ($1, $2, $3)
            ON CONFLICT (app_id) DO UPDATE SET
                settings_json = excluded.settings_json, updated_at = excluded.updated_at,
                version = analytics_settings.version + 1
            RETURNING version
            """, .text(appId), Self.json(settings), SQLValue(at))
        return try Self.returnedVersion(saved, of: "analytics_settings")
    }

    @discardableResult
    func applyAnalyticsContribution(
        customerId: Int64, appId: String, environment: AppStoreEnvironment,
        _ contribution: [AnalyticsDailyKey: AnalyticsMeasures]
    ) throws -> Bool {
        let cacheKey = AnalyticsContributionCache.Key(customerId: customerId, environment: environment.rawValue)
        let cache = AnalyticsContributionCache.shared
        let storedText = try row(
            "SELECT contribution_json FROM analytics_contributions WHERE customer_id = $1 AND environment = $2",
            .integer(customerId), .text(environment.rawValue)
        )?.text(0)
        // The previous contribution, from the cache when it was made from exactly this text.
        let previous =
            try storedText.map { try cache.value(cacheKey, text: $0, decode: Self.storedContribution) }
            ?? AnalyticsContributionCache.Entry()
        // The new entries in key order (positions are sorted, not the keys: moving a key retains
        // and releases four strings), then one walk over both lists: each key's difference goes
        // to the daily rows, and an entry whose measures did not change keeps its stored text.
        // Not written to the rows here: the differences of every customer this transaction
        // updates are added up and written together just before it commits, sorted by row
        // (`flushAnalyticsDaily`). The daily rows are shared by every customer of the app, so two
        // group commits writing them customer by customer took them in opposite orders and
        // deadlocked on PostgreSQL (503s under concurrent purchases); taken last and in one
        // order, they cannot.
        // (A loop, not `filter`: filtering a dictionary builds and hashes another one.) The
        // sort compares the days from an array of their own first: most keys differ by day, and
        // reaching a key inside the entries retains and releases its four strings.
        var unsorted: [(key: AnalyticsDailyKey, value: AnalyticsMeasures)] = []
        unsorted.reserveCapacity(contribution.count)
        for entry in contribution where !entry.value.isZero { unsorted.append(entry) }
        let days = unsorted.map(\.key.day.daysSince1970)
        let order = unsorted.indices.sorted {
            days[$0] != days[$1] ? days[$0] < days[$1] : unsorted[$0].key < unsorted[$1].key
        }
        var kept = AnalyticsContributionCache.Entry()
        kept.keys.reserveCapacity(order.count)
        kept.measures.reserveCapacity(order.count)
        kept.fragments.reserveCapacity(order.count)
        var changed = false
        func add(_ key: AnalyticsDailyKey, _ difference: AnalyticsMeasures) {
            guard !difference.isZero else { return }
            changed = true
            let row = PendingAnalyticsRow(appId: appId, environment: environment.rawValue, key: key)
            pendingAnalyticsDaily[row] = (pendingAnalyticsDaily[row] ?? AnalyticsMeasures()) + difference
        }
        var next = 0
        var old = 0
        while next < order.count || old < previous.keys.count {
            if old == previous.keys.count || next < order.count && unsorted[order[next]].key < previous.keys[old] {
                let (key, measures) = unsorted[order[next]]
                add(key, measures)
                kept.keys.append(key)
                kept.measures.append(measures)
                kept.fragments.append(nil)
                next += 1
            } else if next == order.count || previous.keys[old] < unsorted[order[next]].key {
                add(previous.keys[old], AnalyticsMeasures() - previous.measures[old])
                old += 1
            } else {
                let (key, measures) = unsorted[order[next]]
                let same = measures == previous.measures[old]
                if !same { add(key, measures - previous.measures[old]) }
                // An unchanged entry keeps its stored key with its stored text, so the two agree:
                // equal keys can differ in bytes (Unicode spellings), and the cache's key is the
                // one a later difference is added under. (A changed entry takes the new spelling,
                // as before; Apple's identifiers are ASCII.)
                kept.keys.append(same ? previous.keys[old] : key)
                kept.measures.append(measures)
                kept.fragments.append(same ? previous.fragments[old] : nil)
                next += 1
                old += 1
            }
        }
        guard changed || storedText == nil else { return false }
        if kept.keys.isEmpty {
            if storedText != nil {
                _ = try execute(
                    "DELETE FROM analytics_contributions WHERE customer_id = $1 AND environment = $2",
                    .integer(customerId), .text(environment.rawValue))
            }
            cache.forget(cacheKey)
            return changed
        }
        // The stored text is the entries in key order, each encoded as `StoredContribution`;
        // an entry whose measures did not change keeps its encoded text.
        for index in kept.keys.indices where kept.fragments[index] == nil {
            kept.fragments[index] = Self.jsonText(
                StoredContribution(key: kept.keys[index], values: kept.measures[index].values))
        }
        let json = Self.keepingStoredSize(joining: kept.fragments.map { $0! }, stored: storedText, dialect: dialect)
        _ = try execute(
            """
            INSERT INTO analytics_contributions (customer_id, environment, app_id, contribution_json)
            VALUES ($1, $2, $3, $4)
            ON CONFLICT (customer_id, environment) DO UPDATE SET contribution_json = excluded.contribution_json
            """, .integer(customerId), .text(environment.rawValue), .text(appId), .text(json))
        // Remembered before the commit: if it rolls back, the text read next differs and is decoded.
        cache.remember(kept, text: json, for: cacheKey)
        return changed
    }

    /// Contributions past this many bytes are padded on SQLite (`keepingStoredSize`): below it a
    /// row fits in its table page and is rewritten as one page anyway.
    static let paddedContributionBytes = 3_000

    /// A contribution's stored text, on SQLite padded with spaces (which JSON allows after the
    /// value, and every reader skips) to the size of the text stored before when it fits in it,
    /// or else to some room beyond its own size. SQLite rewrites a row that keeps its size in
    /// place, writing to the log only the pages whose bytes changed (`btreeOverwriteCell`); a
    /// long history's contribution changes near its end (the new days), so each fact then writes
    /// a page or two of it instead of the whole overflow chain twice over (35 pages for a 69 KB
    /// text: a quarter of a 1,000-fact customer's commit). PostgreSQL writes a new version of the row
    /// whatever its size, so its texts are not padded.
    ///
    /// The text is the JSON array of `fragments` (`[a,b,…]`), written once into a buffer of its
    /// final size: joined, bracketed and padded one after the other, a long history's text was
    /// copied four times and regrown while joining.
    static func keepingStoredSize(joining fragments: [String], stored: String?, dialect: SQLDialect) -> String {
        var size = 2 + max(0, fragments.count - 1)
        for fragment in fragments { size += fragment.utf8.count }
        let target: Int
        if dialect != .sqlite || size <= paddedContributionBytes {
            target = size
        } else if let kept = stored?.utf8.count, kept >= size, kept <= size + size / 4 + 8_192 {
            target = kept
        } else {
            // Room for a few months of new days, in whole pages.
            target = (size + size / 8 + 1_024 + 4_095) / 4_096 * 4_096
        }
        return String(unsafeUninitializedCapacity: target) { buffer in
            var end = 0
            func append(_ byte: UInt8) {
                buffer[end] = byte
                end += 1
            }
            append(UInt8(ascii: "["))
            for (index, fragment) in fragments.enumerated() {
                if index > 0 { append(UInt8(ascii: ",")) }
                end += UnsafeMutableBufferPointer(rebasing: buffer[end...]).initialize(fromContentsOf: fragment.utf8)
            }
            append(UInt8(ascii: "]"))
            UnsafeMutableBufferPointer(rebasing: buffer[end...]).initialize(repeating: UInt8(ascii: " "))
            return target
        }
    }

    /// A stored contribution's measures by key (entries of one key added up); the texts of its
    /// entries are made when the next contribution is encoded.
    static func storedContribution(_ text: String) throws(StoreError) -> AnalyticsContributionCache.Entry {
        var measures: [AnalyticsDailyKey: AnalyticsMeasures] = [:]
        let entries: [StoredContribution]
        if let read = ColumnJSONReader.contributions(from: text) {
            entries = read
        } else {
            entries = try decode([StoredContribution].self, text, column: "analytics_contributions.contribution_json")
        }
        for entry in entries {
            guard let values = AnalyticsMeasures(values: entry.values) else {
                throw StoreError(.corruptValue, "analytics_contributions: an entry has the wrong number of values")
            }
            measures[entry.key] = (measures[entry.key] ?? AnalyticsMeasures()) + values
        }
        let keys = measures.keys.sorted()
        return AnalyticsContributionCache.Entry(
            keys: keys, measures: keys.map { measures[$0]! }, fragments: Array(repeating: nil, count: keys.count))
    }

    func reconcileAnalyticsDaily(appId: String) throws -> Int {
        try flushAnalyticsDaily()
        // The rows first, locked in key order as ingestion takes them. An ingestion that already
        // added its difference to one of them has committed when the lock is granted, so its
        // contribution is read below; one that has not waits for this commit and then adds its
        // difference to the reconciled row. A row it inserted meanwhile is not locked here: its
        // contribution is read only if it committed, and the row is written only when a
        // committed contribution or a locked row names it, so the row and the sum still agree.
        let lock: String
        switch dialect {
        case .postgres: lock = " FOR UPDATE"
        // The single writer connection already excludes every other write.
        case .sqlite: lock = ""
        }
        var current: [AnalyticsRowKey: AnalyticsMeasures] = [:]
        for row in try rows(
            """
            SELECT environment, day, product_id, subscription_group, storefront, currency, store,
                   \(Self.measureColumns)
            FROM analytics_daily WHERE app_id = $1
            ORDER BY environment, day, product_id, subscription_group, storefront, currency, store\(lock)
            """, .text(appId))
        {
            let key = AnalyticsRowKey(environment: try row.text(0), key: try Self.dailyKey(row, from: 1))
            current[key] = try Self.measures(row, from: 7)
        }
        var sums: [AnalyticsRowKey: AnalyticsMeasures] = [:]
        for row in try rows(
            "SELECT environment, contribution_json FROM analytics_contributions WHERE app_id = $1", .text(appId))
        {
            let environment = try row.text(0)
            let entries = try Self.decode(
                [StoredContribution].self, try row.text(1), column: "analytics_contributions.contribution_json")
            for entry in entries {
                guard let measures = AnalyticsMeasures(values: entry.values) else {
                    throw StoreError(.corruptValue, "analytics_contributions: an entry has the wrong number of values")
                }
                let key = AnalyticsRowKey(environment: environment, key: entry.key)
                sums[key] = (sums[key] ?? AnalyticsMeasures()) + measures
            }
        }
        let differing = Set(current.keys).union(sums.keys).filter {
            (current[$0] ?? AnalyticsMeasures()) != (sums[$0] ?? AnalyticsMeasures())
        }.sorted()
        guard !differing.isEmpty else { return 0 }
        // Absolute values (a row no contribution names becomes zeros, which reads as no row).
        let updates = AnalyticsMeasures.columns.map { "\($0) = excluded.\($0)" }
        _ = try insertRows(
            into: """
                INSERT INTO analytics_daily (app_id, environment, day, product_id, subscription_group, storefront,
                                             currency, store, \(Self.measureColumns))
                """,
            onConflict: """
                ON CONFLICT (app_id, environment, day, product_id, subscription_group, storefront, currency, store)
                DO UPDATE SET \(updates.joined(separator: ", "))
                """,
            width: 8 + AnalyticsMeasures.columns.count,
            differing.map { row in
                [
                    .text(appId), .text(row.environment), .integer(row.key.day.daysSince1970),
                    .text(row.key.productId), .text(row.key.subscriptionGroup), .text(row.key.storefront),
                    .text(row.key.currency), .text(row.key.store.rawValue),
                ] + (sums[row] ?? AnalyticsMeasures()).values.map { SQLValue.integer($0) }
            })
        return differing.count
    }

    /// Writes the daily-row differences this transaction has gathered, in one sorted order; the
    /// stores call it before `COMMIT`, and every read of the daily rows calls it first.
    func flushAnalyticsDaily() throws {
        let rows = pendingAnalyticsDaily.filter { !$0.value.isZero }.sorted { $0.key < $1.key }
        pendingAnalyticsDaily = [:]
        // The cohort rows after the daily ones: every transaction takes them in that order.
        guard !rows.isEmpty else { return try flushAnalyticsCohorts() }
        let width = 8 + AnalyticsMeasures.columns.count
        let updates = AnalyticsMeasures.columns.map { "\($0) = analytics_daily.\($0) + excluded.\($0)" }
        _ = try insertRows(
            into: """
                INSERT INTO analytics_daily (app_id, environment, day, product_id, subscription_group, storefront,
                                             currency, store, \(Self.measureColumns))
                """,
            onConflict: """
                ON CONFLICT (app_id, environment, day, product_id, subscription_group, storefront, currency, store)
                DO UPDATE SET \(updates.joined(separator: ", "))
                """,
            width: width,
            rows.map { row, measures in
                [
                    .text(row.appId), .text(row.environment), .integer(row.key.day.daysSince1970),
                    .text(row.key.productId), .text(row.key.subscriptionGroup), .text(row.key.storefront),
                    .text(row.key.currency), .text(row.key.store.rawValue),
                ] + measures.values.map { SQLValue.integer($0) }
            })
        try flushAnalyticsCohorts()
    }

    /// A daily row of any app, as gathered before it is written; sorted by app, environment,
    /// then `AnalyticsDailyKey` order, the order every transaction writes them in.
    struct PendingAnalyticsRow: Hashable, Comparable {
        var appId: String
        var environment: String
        var key: AnalyticsDailyKey

        static func < (lhs: PendingAnalyticsRow, rhs: PendingAnalyticsRow) -> Bool {
            if lhs.appId != rhs.appId { return lhs.appId < rhs.appId }
            return lhs.environment != rhs.environment ? lhs.environment < rhs.environment : lhs.key < rhs.key
        }
    }

    /// A daily row's whole key: the environment, then the rest in `AnalyticsDailyKey` order.
    private struct AnalyticsRowKey: Hashable, Comparable {
        var environment: String
        var key: AnalyticsDailyKey

        static func < (lhs: AnalyticsRowKey, rhs: AnalyticsRowKey) -> Bool {
            lhs.environment != rhs.environment ? lhs.environment < rhs.environment : lhs.key < rhs.key
        }
    }

    func analyticsDailyTotals(
        appId: String, environment: AppStoreEnvironment, from: CalendarDay, through: CalendarDay,
        filter: AnalyticsFilter
    ) throws -> [AnalyticsDailyTotal] {
        try flushAnalyticsDaily()
        let (conditions, arguments) = Self.analyticsFilterClause(filter, firstParameter: 5)
        let found = try connection.query(
            """
            SELECT day, currency, \(Self.summedColumns) FROM analytics_daily
            WHERE app_id = $1 AND environment = $2 AND day >= $3 AND day <= $4\(conditions)
            GROUP BY day, currency ORDER BY day, currency
            """,
            [.text(appId), .text(environment.rawValue), .integer(from.daysSince1970), .integer(through.daysSince1970)]
                + arguments)
        return try found.map { row throws(StoreError) in
            try Self.total(row, day: CalendarDay(daysSince1970: try row.integer(0)))
        }
    }

    func analyticsTotalsBefore(
        appId: String, environment: AppStoreEnvironment, day: CalendarDay, filter: AnalyticsFilter
    ) throws -> [AnalyticsDailyTotal] {
        try flushAnalyticsDaily()
        let (conditions, arguments) = Self.analyticsFilterClause(filter, firstParameter: 4)
        let found = try connection.query(
            """
            SELECT 0, currency, \(Self.summedColumns) FROM analytics_daily
            WHERE app_id = $1 AND environment = $2 AND day < $3\(conditions)
            GROUP BY currency ORDER BY currency
            """, [.text(appId), .text(environment.rawValue), .integer(day.daysSince1970)] + arguments)
        return try found.map { row throws(StoreError) in try Self.total(row, day: day) }
    }

    func analyticsRows(appId: String) throws -> [AnalyticsDailyRow] {
        try flushAnalyticsDaily()
        return try rows(
            """
            SELECT environment, day, product_id, subscription_group, storefront, currency, store,
                   \(Self.measureColumns)
            FROM analytics_daily WHERE app_id = $1
            ORDER BY environment, day, product_id, subscription_group, storefront, currency, store
            """, .text(appId)
        ).compactMap { row throws(StoreError) -> AnalyticsDailyRow? in
            let measures = try Self.measures(row, from: 7)
            guard !measures.isZero else { return nil }
            return AnalyticsDailyRow(
                environment: try row.text(0), key: try Self.dailyKey(row, from: 1), measures: measures)
        }
    }

    func customerIds(appId: String) throws -> [Int64] {
        try rows("SELECT id FROM customers WHERE app_id = $1 ORDER BY id", .text(appId)).map {
            row throws(StoreError) in try row.integer(0)
        }
    }

    static func analyticsFilterClause(_ filter: AnalyticsFilter, firstParameter: Int) -> (String, [SQLValue]) {
        var text = ""
        var arguments: [SQLValue] = []
        for (column, value) in [
            ("product_id", filter.productId), ("storefront", filter.storefront),
            ("subscription_group", filter.subscriptionGroup), ("store", filter.store?.rawValue),
        ] {
            guard let value else { continue }
            arguments.append(.text(value))
            text += " AND \(column) = $\(firstParameter + arguments.count - 1)"
        }
        return (text, arguments)
    }

    /// The key of a daily row read as day, product, group, storefront, currency, store from
    /// column `first`.
    private static func dailyKey(_ row: SQLRow, from first: Int) throws(StoreError) -> AnalyticsDailyKey {
        guard let store = AnalyticsStore(rawValue: try row.text(first + 5)) else {
            throw StoreError(.corruptValue, "analytics_daily.store: unknown value")
        }
        return AnalyticsDailyKey(
            day: CalendarDay(daysSince1970: try row.integer(first)), productId: try row.text(first + 1),
            subscriptionGroup: try row.text(first + 2), storefront: try row.text(first + 3),
            currency: try row.text(first + 4), store: store)
    }

    private static func total(_ row: SQLRow, day: CalendarDay) throws(StoreError) -> AnalyticsDailyTotal {
        AnalyticsDailyTotal(day: day, currency: try row.text(1), measures: try measures(row, from: 2))
    }

    private static func measures(_ row: SQLRow, from first: Int) throws(StoreError) -> AnalyticsMeasures {
        var values: [Int64] = []
        for index in first..<(first + AnalyticsMeasures.columns.count) { values.append(try row.integer(index)) }
        return AnalyticsMeasures(values: values)!
    }
}
