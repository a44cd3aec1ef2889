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
/// stored JSON text (`factJSON`, `customerInfoJSON`) in the caller's transaction, and a value is
/// reused only for the very bytes it came from (decoded from them, or, for a fact the caller's
/// transaction inserted, the fact they were encoded from: equal to their decoding, a store test
/// checks). Whatever another instance wrote, a rolled-back transaction left behind, or a
/// transfer moved, the text read now is the truth, so the facts and state handed out are those a
/// fresh decoding gives.
/// - Note: Thread-safe: entries sit behind a `Mutex`; decoding and comparing happen outside it.
public final class CustomerEvaluationCache: Sendable {
    /// One decoded stored value and the exact text it was decoded from; by reference, so
    /// handing the known facts of a long history around copies pointers, not facts.
    final class Decoded<Value: Sendable>: Sendable {
        let json: String
        let value: Value

        init(json: String, value: Value) {
            self.json = json
            self.value = value
        }
    }

    struct Key: Hashable, Sendable {
        var customerId: Int64
        var environment: AppStoreEnvironment
    }

    private struct Entries {
        /// Per customer, per kind (at `ordinal(kind)`), oldest first.
        var facts: [Int64: [[Decoded<Fact>]]] = [:]
        var states: [Key: Decoded<PreviousEvaluation>] = [:]
        /// How each state was last encoded here, for the next encoding to reuse.
        var encodings: [Key: CustomerInfoEncoding] = [:]
        /// Customers by last use, for eviction.
        var lastUse: [Int64: UInt64] = [:]
        var clock: UInt64 = 0
        var factCount = 0
    }

    /// The most facts kept, all customers together (50,000: about 35 MB); least recently used
    /// customers go first.
    public let capacity: Int
    /// The most customers kept (their states count too).
    static let maximumCustomers = 20_000
    private let entries = Mutex(Entries())

    public init(capacity: Int = 50_000) {
        self.capacity = max(0, capacity)
    }

    /// The process-wide cache `CustomerStateUpdater` uses.
    public static let shared = CustomerEvaluationCache()

    /// The customer's facts, as `reader.facts(customerId:)` returns them.
    public func facts(customerId: Int64, in reader: any StoreReader) throws -> [Fact] {
        let stored = try reader.factJSON(customerId: customerId)
        // Arrays indexed by kind rather than dictionaries keyed by it: a kind hashes its raw
        // string, and this loop runs once per fact of the customer.
        let cachedFacts = entries.withLock { $0.facts[customerId] } ?? Self.noFacts
        var fresh = Self.noFacts
        var facts: [Fact] = []
        facts.reserveCapacity(stored.count)
        var indexByJSON: [[String: Int]?] = Array(repeating: nil, count: Self.kinds.count)
        for row in stored {
            let kind = Self.ordinal(row.kind)
            let index = fresh[kind].count
            let cached = cachedFacts[kind]
            var known: Decoded<Fact>?
            // Rows come oldest first, so known rows keep their place and new ones follow them;
            // anything else (a transfer, a rollback) is looked up by its text. A row past the
            // known ones while all before it kept their place is new: no lookup (hashing every
            // known row's text to find nothing cost more than the rest of this step).
            if index < cached.count, StoredText.sameBytes(cached[index].json, row.json) {
                known = cached[index]
            } else if !cached.isEmpty, index < cached.count || indexByJSON[kind] != nil {
                if indexByJSON[kind] == nil {
                    indexByJSON[kind] = Dictionary(
                        cached.indices.map { (cached[$0].json, $0) }, uniquingKeysWith: { first, _ in first })
                }
                if let match = indexByJSON[kind]?[row.json], StoredText.sameBytes(cached[match].json, row.json) {
                    known = cached[match]
                }
            }
            let decoded = try known ?? Decoded(json: row.json, value: row.decode())
            facts.append(decoded.value)
            fresh[kind].append(decoded)
        }
        store(facts: fresh, count: stored.count, customerId: customerId)
        return facts
    }

    private static let kinds = FactKind.allCases
    private static let noFacts = [[Decoded<Fact>]](repeating: [], count: kinds.count)

    static func ordinal(_ kind: FactKind) -> Int {
        switch kind {
        case .transaction: 0
        case .renewalInfo: 1
        case .notification: 2
        case .playSubscription: 3
        case .playProductPurchase: 4
        case .playVoidedPurchase: 5
        case .playOrder: 6
        }
    }

    /// What the next evaluation reads of the customer's stored state in `environment`, and the
    /// state's version (as `reader.customerInfo(customerId:environment:)` has them).
    public func previousEvaluation(
        customerId: Int64, environment: AppStoreEnvironment, in reader: any StoreReader
    ) throws -> (previous: PreviousEvaluation, version: Int64)? {
        guard let stored = try reader.customerInfoJSON(customerId: customerId, environment: environment) else {
            return nil
        }
        let key = Key(customerId: customerId, environment: environment)
        if let cached = entries.withLock({ $0.states[key] }), StoredText.sameBytes(cached.json, stored.json) {
            return (cached.value, stored.version)
        }
        let previous = try stored.decodePrevious()
        if capacity > 0 {
            entries.withLock { entries in
                entries.states[key] = Decoded(json: stored.json, value: previous)
                touch(customerId, &entries)
            }
        }
        return (previous, stored.version)
    }

    /// Records `info`, encoded as `encoding` (and stored as `encoding.json`), as the customer's
    /// state in its environment.
    public func remember(_ info: CustomerInfo, encoding: CustomerInfoEncoding, customerId: Int64) {
        guard capacity > 0 else { return }
        let key = Key(customerId: customerId, environment: info.environment)
        entries.withLock { entries in
            entries.states[key] = Decoded(json: encoding.json, value: PreviousEvaluation(info))
            entries.encodings[key] = encoding
            touch(customerId, &entries)
        }
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

    private func store(facts: [[Decoded<Fact>]], count: Int, customerId: Int64) {
        guard count <= capacity else { return }
        entries.withLock { entries in
            entries.factCount -= entries.facts[customerId]?.reduce(0) { $0 + $1.count } ?? 0
            entries.facts[customerId] = facts
            entries.factCount += count
            touch(customerId, &entries)
        }
    }

    private func touch(_ customerId: Int64, _ entries: inout Entries) {
        entries.clock += 1
        entries.lastUse[customerId] = entries.clock
        guard entries.factCount > capacity || entries.lastUse.count > Self.maximumCustomers else { return }
        // Over budget: the least recently used half goes at once, so eviction costs little per use.
        let byAge = entries.lastUse.sorted { $0.value < $1.value }
        for (oldest, _) in byAge.prefix(max(1, byAge.count / 2)) where oldest != customerId {
            entries.factCount -= entries.facts[oldest]?.reduce(0) { $0 + $1.count } ?? 0
            entries.facts[oldest] = nil
            entries.lastUse[oldest] = nil
            for environment in AppStoreEnvironment.allCases {
                entries.states[Key(customerId: oldest, environment: environment)] = nil
                entries.encodings[Key(customerId: oldest, environment: environment)] = nil
            }
        }
    }
}
