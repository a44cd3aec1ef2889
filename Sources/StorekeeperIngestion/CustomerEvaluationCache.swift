import AppStoreModels
import Entitlements
import Foundation
import Storage
import Synchronization

/// Decoded facts and states kept between evaluations, so that re-evaluating a customer with a
/// long history decodes only what is new: its facts and its previous `CustomerInfo` are
/// otherwise JSON-decoded from the store on every ingestion.
///
/// Checked by content, never trusted: every use reads the customer's facts and state as the
/// stored JSON text (`scanFactJSON`, `customerInfoJSON`) in the caller's transaction, and a value is
/// reused only for the very bytes it came from (decoded from them, or, for a fact the caller's
/// transaction inserted, the fact they were encoded from: equal to their decoding, a store test
/// checks). Whatever another instance wrote, a rolled-back transaction left behind, or a
/// transfer moved, the text read now is the truth, so the facts and state handed out are those a
/// fresh decoding gives. On SQLite the facts' rows are not even read while the stamps of the
/// customer's purchases show that nothing but the caller's own writes changed them
/// (`StoreReader.factStamps`, migrations 0027 and 0028).
/// - Note: Thread-safe: entries sit behind a `Mutex`; decoding and comparing happen outside it.
public final class CustomerEvaluationCache: Sendable {
    /// One decoded stored state and the exact text it was decoded from; by reference, so a
    /// lookup copies a pointer, not the state.
    final class Decoded<Value: Sendable>: Sendable {
        let json: String
        let value: Value

        init(json: String, value: Value) {
            self.json = json
            self.value = value
        }
    }

    /// One customer's known facts in `factJSON`'s order (as handed out), each with its stored
    /// row and the exact text it was decoded from. Parallel arrays, each fact held once: a
    /// table by row besides them cost more memory than the facts, for lookups only rows that
    /// arrive out of order need (`index(of:)` builds one then).
    struct CustomerFacts: Sendable {
        private(set) var keys: [FactRowKey] = []
        private(set) var texts: [String] = []
        private(set) var facts: [Fact] = []

        var count: Int { keys.count }

        mutating func append(key: FactRowKey, text: String, fact: Fact) {
            keys.append(key)
            texts.append(text)
            facts.append(fact)
        }

        /// Adds a row that sorts at `index` among those known.
        mutating func insert(key: FactRowKey, text: String, fact: Fact, at index: Int) {
            keys.insert(key, at: index)
            texts.insert(text, at: index)
            facts.insert(fact, at: index)
        }

        /// Puts a row written since in its place: a new row among the others by its key, a
        /// rewritten one over what it held.
        mutating func apply(_ write: FactRowWrite) {
            var low = 0
            var high = keys.count
            while low < high {
                let middle = (low + high) / 2
                if keys[middle] < write.key { low = middle + 1 } else { high = middle }
            }
            if low < keys.count, keys[low] == write.key {
                texts[low] = write.json
                facts[low] = write.fact
            } else {
                insert(key: write.key, text: write.json, fact: write.fact, at: low)
            }
        }

        /// The purchases' stamps these facts were read at (`StoreReader.factStamps`).
        var stamps: [PurchaseFactStamp]?
    }

    /// The stored texts of a customer's standing events, and the version of the state they
    /// were written with.
    struct KnownEventTexts: Sendable {
        var version: Int64
        var texts: [String: String]
    }

    struct Key: Hashable, Sendable {
        var customerId: Int64
        var environment: AppStoreEnvironment
    }

    private struct Entries {
        var facts: [Int64: CustomerFacts] = [:]
        var states: [Key: Decoded<PreviousEvaluation>] = [:]
        /// How each state was last encoded here, for the next encoding to reuse.
        var encodings: [Key: CustomerInfoEncoding] = [:]
        /// The stored texts of the standing events by id, as the evaluation whose state is the
        /// `json` remembered here, at its version, wrote them (long histories only).
        var eventTexts: [Key: Decoded<KnownEventTexts>] = [:]
        /// How many texts `eventTexts` holds: counted with the facts against `capacity`.
        var eventTextCount = 0
        /// Customers by last use, for eviction.
        var lastUse: [Int64: UInt64] = [:]
        var clock: UInt64 = 0
        var factCount = 0
    }

    /// The most facts kept, all customers together (50,000: about 35 MB), remembered event texts
    /// counted with them (each a string the event text cache shares while it holds the event);
    /// least recently used customers go first.
    public let capacity: Int
    /// The most customers kept (their states count too).
    static let maximumCustomers = 20_000
    private let entries = Mutex(Entries())
    /// How many times `facts(customerId:in:)` read the customer's fact rows (tests).
    let scans = Atomic<Int>(0)
    /// How many times `previousState` knew the standing events' stored texts (tests).
    let knownEventTexts = Atomic<Int>(0)

    /// The fewest facts for which a customer's purchases' stamps are read and kept, so that
    /// the next evaluation may skip reading the rows (tests take 0).
    let stampedFactCount: Int

    public init(capacity: Int = 50_000, stampedFactCount: Int = 64) {
        self.capacity = max(0, capacity)
        self.stampedFactCount = stampedFactCount
    }

    /// The process-wide cache `CustomerStateUpdater` uses.
    public static let shared = CustomerEvaluationCache()

    /// The customer's facts, as `reader.facts(customerId:)` returns them.
    ///
    /// Where the purchases' stamps account for every change since the known facts were read
    /// (`StoreReader.factRowsWritten`), the rows the caller's transaction wrote go in at their
    /// places and nothing else is read. Otherwise each stored row is compared in place with the
    /// text its known decoding came from (found by the row's table and id), so a known row
    /// costs a byte comparison: no copy of its text, no decoding. When every known row is still there unchanged (new facts only added, the usual
    /// case), the facts handed out last time are kept and the new ones inserted at their places,
    /// rather than every fact copied into a new array again.
    public func facts(customerId: Int64, in reader: any StoreReader) throws -> [Fact] {
        try facts(customerId: customerId, in: reader, stamping: nil)
    }

    /// `facts(customerId:in:)` in a write: a customer with a long history has its purchases
    /// stamped (`StoreTransaction.stampFacts`), so that its next evaluation may skip the rows.
    public func facts(customerId: Int64, in transaction: any StoreTransaction) throws -> [Fact] {
        try facts(customerId: customerId, in: transaction, stamping: transaction)
    }

    private func facts(customerId: Int64, in reader: any StoreReader, stamping: (any StoreTransaction)?) throws
        -> [Fact]
    {
        // Taken out while in use, so that its arrays are not shared with the cache and grow in
        // place. Only one ingestion at a time works out a customer (under its lock); should two
        // ever overlap, the second finds nothing and decodes, and the last one stored wins.
        var cached = entries.withLock { entries -> CustomerFacts? in
            guard let taken = entries.facts.removeValue(forKey: customerId) else { return nil }
            entries.factCount -= taken.count
            return taken
        }
        // While the purchases' stamps account for every change since the known facts were read
        // (the rows this transaction wrote, or none), those facts with the new rows in their
        // places are the stored ones: no row is read (a long history's thousand rows, compared
        // one by one, were a third of its ingestion).
        var stamps: [PurchaseFactStamp]?
        if cached?.stamps != nil {
            stamps = try reader.factStamps(customerId: customerId)
        }
        if let stamps, let known = cached?.stamps, let written = reader.factRowsWritten(from: known, to: stamps),
            var kept = cached.take()
        {
            for write in written { kept.apply(write) }
            kept.stamps = stamps
            store(kept, customerId: customerId)
            return kept.facts
        }
        scans.add(1, ordering: .relaxed)
        // Each row read, by key: `source` is a known fact's place, or (negative) a new one's in
        // `fresh` (kept apart: an array of facts for every row would be mostly empty room).
        var rows: [(key: FactRowKey, source: Int)] = []
        rows.reserveCapacity(cached?.count ?? 0)
        var fresh: [(json: String, fact: Fact)] = []
        var knownCount = 0
        // Rows mostly come in the known order: the next known one is tried before a lookup.
        var next = 0
        var indexByKey: [FactRowKey: Int]?
        try reader.scanFactJSON(customerId: customerId) { row throws(StoreError) in
            // Read through the optional (no copy of the entry, whose arrays must stay unshared).
            var candidate: Int?
            if next < cached?.count ?? 0, cached?.keys[next] == row.key {
                candidate = next
                next += 1
            } else if let known = cached?.keys, !known.isEmpty {
                if indexByKey == nil {
                    indexByKey = Dictionary(
                        known.indices.map { (known[$0], $0) }, uniquingKeysWith: { first, _ in first })
                }
                candidate = indexByKey?[row.key]
            }
            if let index = candidate, let text = cached?.texts[index], StoredText.sameBytes(text, row.json) {
                rows.append((row.key, index))
                knownCount += 1
            } else {
                fresh.append(try row.decode())
                rows.append((row.key, -fresh.count))
            }
        }
        // Rows mostly come in key order already (one purchase: each table by id).
        var distinct = true
        if !rows.indices.dropFirst().allSatisfy({ rows[$0 - 1].key < rows[$0].key }) {
            rows.sort { $0.key < $1.key }
            distinct = !rows.indices.dropFirst().contains { rows[$0 - 1].key == rows[$0].key }
        }
        var result = CustomerFacts()
        if distinct, knownCount == cached?.count, var kept = cached.take() {
            // Every known row is still there, unchanged: the new ones go in at their places.
            for (index, row) in rows.enumerated() where row.source < 0 {
                let (text, fact) = fresh[-row.source - 1]
                kept.insert(key: row.key, text: text, fact: fact, at: index)
            }
            result = kept
        } else {
            let known = cached ?? CustomerFacts()
            for row in rows {
                let (text, fact) =
                    row.source >= 0 ? (known.texts[row.source], known.facts[row.source]) : fresh[-row.source - 1]
                result.append(key: row.key, text: text, fact: fact)
            }
        }
        // Stamps are read (in a write, given where missing) for a history long enough to gain
        // from them, in the same transaction as the rows: a short one's few rows cost about what
        // stamping its purchases would cost every write of their facts.
        if stamps == nil, result.count >= stampedFactCount {
            stamps = try stamping?.stampFacts(customerId: customerId) ?? reader.factStamps(customerId: customerId)
        }
        result.stamps = stamps
        store(result, customerId: customerId)
        return result.facts
    }

    /// What the next evaluation reads of the customer's stored state in `environment`, and the
    /// state's version (as `reader.customerInfo(customerId:environment:)` has them).
    public func previousEvaluation(
        customerId: Int64, environment: AppStoreEnvironment, in reader: any StoreReader
    ) throws -> (previous: PreviousEvaluation, version: Int64)? {
        try previousState(customerId: customerId, environment: environment, in: reader).map {
            ($0.previous, $0.version)
        }
    }

    /// The stored state as `previousEvaluation` gives it, with the stored texts of the
    /// customer's standing events of `environment` by id when they are known: when the stored
    /// state is, byte for byte and at the same version, the one an evaluation remembered here
    /// with its events' texts.
    ///
    /// Events are written only with their customer's state, in the same transaction
    /// (`CustomerStateUpdater`), so that evaluation's commit wrote them too. Whatever else
    /// happened since changed the state's version, its text, or both: a later evaluation here
    /// remembered its own texts (in any environment: it forgets the others', as events are the
    /// customer's); one rolled back left the version before, even where it would have stored the
    /// same text (an evaluation at the same instant whose fact changed an event only); another
    /// instance's commit moved the version past it. Then nothing is known, and the events are
    /// read. (Left: another instance committing, at the very version remembered here after a
    /// rollback, a state of the same text at the same millisecond with other events.)
    func previousState(
        customerId: Int64, environment: AppStoreEnvironment, in reader: any StoreReader
    ) throws -> (previous: PreviousEvaluation, version: Int64, eventTexts: [String: String]?)? {
        guard let stored = try reader.customerInfoJSON(customerId: customerId, environment: environment) else {
            return nil
        }
        let key = Key(customerId: customerId, environment: environment)
        let (cached, texts) = entries.withLock { ($0.states[key], $0.eventTexts[key]) }
        // Compared with the state text's own record (the state itself may have been decoded
        // from another text since).
        let eventTexts = texts.flatMap {
            $0.value.version == stored.version && StoredText.sameBytes($0.json, stored.json) ? $0.value.texts : nil
        }
        if eventTexts != nil { knownEventTexts.add(1, ordering: .relaxed) }
        if let cached, StoredText.sameBytes(cached.json, stored.json) {
            return (cached.value, stored.version, eventTexts)
        }
        let previous = try stored.decodePrevious()
        if capacity > 0 {
            entries.withLock { entries in
                entries.states[key] = Decoded(json: stored.json, value: previous)
                touch(customerId, &entries)
            }
        }
        return (previous, stored.version, eventTexts)
    }

    /// Records `info`, encoded as `encoding` (and stored as `encoding.json`), as the customer's
    /// state in its environment; with `eventTexts` and `version`, the stored texts its standing
    /// events will have once the evaluation's transaction commits, and the version it saved the
    /// state at (without them: not known).
    public func remember(
        _ info: CustomerInfo, encoding: CustomerInfoEncoding, customerId: Int64, eventTexts: [String: String]? = nil,
        version: Int64? = nil
    ) {
        guard capacity > 0 else { return }
        let key = Key(customerId: customerId, environment: info.environment)
        entries.withLock { entries in
            entries.states[key] = Decoded(json: encoding.json, value: PreviousEvaluation(info))
            entries.encodings[key] = encoding
            // Every environment's known texts go: this evaluation may write an event whose id
            // another environment's evaluation wrote too (the rows are the customer's).
            for environment in AppStoreEnvironment.allCases {
                forgetEventTexts(Key(customerId: customerId, environment: environment), &entries)
            }
            if let eventTexts, let version, eventTexts.count <= capacity / 2 {
                entries.eventTexts[key] = Decoded(
                    json: encoding.json, value: KnownEventTexts(version: version, texts: eventTexts))
                entries.eventTextCount += eventTexts.count
            }
            touch(customerId, &entries)
        }
    }

    private func forgetEventTexts(_ key: Key, _ entries: inout Entries) {
        entries.eventTextCount -= entries.eventTexts.removeValue(forKey: key)?.value.texts.count ?? 0
    }

    /// The last encoding made here of the customer's state in `environment`, whether or not it
    /// was committed: only its encoded parts are reused, each for an equal value.
    public func encoding(customerId: Int64, environment: AppStoreEnvironment) -> CustomerInfoEncoding? {
        entries.withLock { $0.encodings[Key(customerId: customerId, environment: environment)] }
    }

    /// Forgets everything (tests, and a store swapped under a running process).
    public func removeAll() {
        entries.withLock { $0 = Entries() }
    }

    private func store(_ facts: CustomerFacts, customerId: Int64) {
        guard facts.count <= capacity else { return }
        entries.withLock { entries in
            entries.factCount -= entries.facts[customerId]?.count ?? 0
            entries.facts[customerId] = facts
            entries.factCount += facts.count
            touch(customerId, &entries)
        }
    }

    private func touch(_ customerId: Int64, _ entries: inout Entries) {
        entries.clock += 1
        entries.lastUse[customerId] = entries.clock
        guard entries.factCount + entries.eventTextCount > capacity || entries.lastUse.count > Self.maximumCustomers
        else { return }
        // Over budget: the least recently used half goes at once, so eviction costs little per use.
        let byAge = entries.lastUse.sorted { $0.value < $1.value }
        for (oldest, _) in byAge.prefix(max(1, byAge.count / 2)) where oldest != customerId {
            entries.factCount -= entries.facts[oldest]?.count ?? 0
            entries.facts[oldest] = nil
            entries.lastUse[oldest] = nil
            for environment in AppStoreEnvironment.allCases {
                entries.states[Key(customerId: oldest, environment: environment)] = nil
                entries.encodings[Key(customerId: oldest, environment: environment)] = nil
                forgetEventTexts(Key(customerId: oldest, environment: environment), &entries)
            }
        }
    }
}
