import AppStoreModels
import Entitlements
import Foundation
import Storage

/// Storage figures for `make bench`: bulk import, state derivation, CustomerInfo lookups
/// (rate, p50/p99), and durable ingestion commits, against any `Store`.
///
/// Uses its own app (`bench`) and fixed instants, so it can run on a fresh or a used database.
/// - Note: Stateless; run one benchmark per store at a time.
public enum StoreBenchmark {
    /// What one run measured.
    /// - Note: Immutable value; `Sendable`.
    public struct Result: Sendable, CustomStringConvertible {
        public var engine: StoreEngine
        public var transactions: Int
        public var customers: Int
        public var importSeconds: Double
        /// How much the store's files grew during the import (SQLite: database and WAL), when
        /// the caller could tell.
        public var importBytes: Int64?
        /// Deriving every customer's CustomerInfo and events after the import.
        public var deriveSeconds: Double
        public var lookups: Int
        public var lookupSeconds: Double
        public var lookupP50Microseconds: Double
        public var lookupP99Microseconds: Double
        public var commits: Int
        public var commitSeconds: Double
        /// `VmHWM` of this process after the run (Linux), bytes.
        public var peakResidentBytes: Int?

        public var importRowsPerSecond: Double { Double(transactions) / importSeconds }
        public var derivedCustomersPerSecond: Double { Double(customers) / deriveSeconds }
        public var lookupsPerSecond: Double { Double(lookups) / lookupSeconds }
        public var commitsPerSecond: Double { Double(commits) / commitSeconds }

        public var description: String {
            func f(_ value: Double) -> String { String(format: "%.0f", value) }
            return """
                storage \(engine.rawValue): import \(transactions) transactions / \(customers) customers in \
                \(String(format: "%.2f", importSeconds)) s (\(f(importRowsPerSecond)) rows/s); \
                states derived in \(String(format: "%.2f", deriveSeconds)) s (\(f(derivedCustomersPerSecond)) customers/s); \
                CustomerInfo lookups \(f(lookupsPerSecond))/s p50 \(f(lookupP50Microseconds)) µs \
                p99 \(f(lookupP99Microseconds)) µs; durable ingestion commits \(f(commitsPerSecond))/s; \
                peak RSS \(peakResidentBytes.map { "\($0 / 1_048_576) MiB" } ?? "n/a")
                """
        }
    }

    static let appId = "bench"
    static let base: Int64 = 1_767_225_600_000
    static let day: Int64 = 86_400_000
    static let catalog = ProductCatalog(products: [
        CatalogProduct(
            productId: "monthly", kind: .autoRenewable, subscriptionGroup: "g", groupLevel: 1,
            duration: SubscriptionPeriod(value: 1, unit: .month), entitlementIds: ["pro"])
    ])

    /// Imports `transactions` transactions spread over `customers` customers (monthly renewal
    /// chains): customers, their ownership and their transactions (one `insertTransactions`)
    /// in one commit per `customersPerCommit` customers; then derives every customer's
    /// CustomerInfo and events (the engine) in commits of the same size; then runs `lookups`
    /// CustomerInfo reads and `commits` full ingestions. Each phase keeps `concurrency` tasks
    /// (commits) in flight: PostgreSQL runs them side by side, SQLite's single writer in turn.
    public static func run(
        store: any Store, transactions: Int, customers: Int, lookups: Int = 20_000, commits: Int = 2_000,
        concurrency: Int = 8, customersPerCommit: Int = 300, bytesOnDisk: (() -> Int64)? = nil
    ) async throws -> Result {
        let now = Timestamp(millisecondsSince1970: base + 3_650 * day)
        try await store.write { tx in
            try tx.saveApp(AppRecord(id: appId, bundleId: "com.example.bench", environments: [.production]), at: now)
            try tx.saveCatalog(appId: appId, catalog, at: now)
        }
        let clock = ContinuousClock()
        let perCustomer = max(1, transactions / max(1, customers))

        let bytesBefore = bytesOnDisk?()
        let importStart = clock.now
        let ids = try await inBatches(
            customers: customers, size: customersPerCommit, concurrency: concurrency
        ) { range in
            try await store.write(retries: 5) { tx in
                var rows: [NewTransaction] = []
                rows.reserveCapacity(range.count * perCustomer)
                let ids = try tx.ensureCustomers(
                    appId: appId, appUserIds: range.map { "bench-user-\($0)" }, at: now)
                try tx.claimOriginalTransactions(
                    zip(range, ids).map { (originalTransactionId: original($0), customerId: $1) }, at: now)
                for customer in range {
                    for fact in transactionFacts(customer, count: perCustomer) {
                        rows.append(
                            NewTransaction(
                                appId: appId,
                                jws: SignedPayloadFiller.text(
                                    "bench.\(fact.transactionId)", length: SignedPayloadFiller.transactionLength),
                                fact: fact, source: "import",
                                receivedAt: now))
                    }
                }
                try tx.insertTransactions(rows)
                return ids
            }
        }
        let importSeconds = seconds(clock.now - importStart)
        let importBytes = bytesBefore.flatMap { before in bytesOnDisk.map { $0() - before } }

        let deriveStart = clock.now
        _ = try await inBatches(customers: customers, size: customersPerCommit, concurrency: concurrency) { range in
            try await store.write(retries: 5) { tx in
                // Nothing else writes these customers while they are derived: no lock needed.
                for customer in range {
                    let facts = transactionFacts(customer, count: perCustomer).map(Fact.transaction)
                    let previous = try tx.customerInfo(customerId: ids[customer], environment: .production)
                    let evaluation = EntitlementEngine.evaluate(
                        customerId: "bench-user-\(customer)", environment: .production, facts: facts,
                        catalog: catalog, now: now, previous: previous?.info)
                    _ = try tx.saveCustomerInfo(
                        evaluation.customerInfo, customerId: ids[customer], expectedVersion: previous?.version, at: now)
                    _ = try tx.appendEvents(evaluation.newEvents, customerId: ids[customer], at: now)
                }
                return [Int64]()
            }
        }
        let deriveSeconds = seconds(clock.now - deriveStart)

        let lookupStart = clock.now
        let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
            for worker in 0..<concurrency {
                group.addTask {
                    var generator = SystemRandomNumberGenerator()
                    var own: [Double] = []
                    for _ in stride(from: worker, to: lookups, by: concurrency) {
                        let user = "bench-user-\(Int.random(in: 0..<customers, using: &generator))"
                        let started = clock.now
                        let info = try await store.read { reader -> StoredCustomerInfo? in
                            guard let customer = try reader.customer(appId: appId, .appUserId(user)) else { return nil }
                            return try reader.customerInfo(customerId: customer.id, environment: .production)
                        }
                        precondition(info != nil, "benchmark customer without state")
                        own.append(seconds(clock.now - started) * 1_000_000)
                    }
                    return own
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }.sorted()
        }
        let lookupSeconds = seconds(clock.now - lookupStart)

        let run = UUID().uuidString.prefix(8)
        let commitStart = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<concurrency {
                group.addTask {
                    for sequence in stride(from: worker, to: commits, by: concurrency) {
                        let id = "bench-\(run)-\(sequence)"
                        _ = try await store.write(retries: 10) { tx in
                            try ingest(id: id, customer: sequence % max(1, customers), now: now, tx)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let commitSeconds = seconds(clock.now - commitStart)

        func percentile(_ p: Double) -> Double {
            latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
        }
        return Result(
            engine: store.engine, transactions: perCustomer * customers, customers: customers,
            importSeconds: importSeconds, importBytes: importBytes, deriveSeconds: deriveSeconds, lookups: lookups,
            lookupSeconds: lookupSeconds,
            lookupP50Microseconds: percentile(0.50), lookupP99Microseconds: percentile(0.99), commits: commits,
            commitSeconds: commitSeconds, peakResidentBytes: peakResidentBytes())
    }

    /// Creates the customer, claims its renewal chain and saves its evaluated state; returns
    /// its transactions for the transaction's bulk insert.
    static func original(_ customer: Int) -> String { "bench-o\(customer)" }

    /// The customer's monthly renewal chain.
    static func transactionFacts(_ customer: Int, count: Int) -> [TransactionFact] {
        (0..<count).map { period in
            let start = base + Int64(period) * 30 * day
            return TransactionFact(
                transactionId: "\(original(customer))-t\(period)", originalTransactionId: original(customer),
                productId: "monthly", purchaseDate: Timestamp(millisecondsSince1970: start),
                expiresDate: Timestamp(millisecondsSince1970: start + 30 * day),
                signedDate: Timestamp(millisecondsSince1970: start), environment: .production, price: 9990,
                currency: "USD", transactionReason: period == 0 ? .purchase : .renewal)
        }
    }

    /// Runs `body` for consecutive ranges of `size` customers, `concurrency` at a time; returns
    /// what the bodies returned (one id per customer), in customer order.
    static func inBatches(
        customers: Int, size: Int, concurrency: Int, _ body: @escaping @Sendable (Range<Int>) async throws -> [Int64]
    ) async throws -> [Int64] {
        var ids = [Int64](repeating: 0, count: customers)
        try await withThrowingTaskGroup(of: (Range<Int>, [Int64]).self) { group in
            var next = 0
            var inFlight = 0
            while next < customers || inFlight > 0 {
                while inFlight < max(1, concurrency), next < customers {
                    let range = next..<min(customers, next + max(1, size))
                    next = range.upperBound
                    group.addTask { (range, try await body(range)) }
                    inFlight += 1
                }
                guard let (range, result) = try await group.next() else { break }
                inFlight -= 1
                for (customer, id) in zip(range, result) { ids[customer] = id }
            }
        }
        return ids
    }

    /// One notification-driven ingestion, as the server does it.
    static func ingest(id: String, customer: Int, now: Timestamp, _ tx: any StoreTransaction) throws -> Bool {
        let original = "\(id)-o"
        let fact = TransactionFact(
            transactionId: "\(id)-t", originalTransactionId: original, productId: "monthly", purchaseDate: now,
            expiresDate: now.adding(milliseconds: 30 * day), signedDate: now, environment: .production, price: 9990,
            currency: "USD", transactionReason: .purchase)
        let insertion = try tx.insertNotification(
            NewNotification(
                appId: appId, notificationUUID: id, type: "SUBSCRIBED", subtype: "INITIAL_BUY",
                environment: .production,
                originalTransactionId: original, signedDate: now,
                signedPayload: SignedPayloadFiller.text("bench.\(id)", length: SignedPayloadFiller.notificationLength),
                fact: nil,
                receivedAt: now))
        guard case .inserted(let notificationId) = insertion else { return false }
        let record = try tx.ensureCustomer(appId: appId, appUserId: "bench-user-\(customer)", at: now)
        try tx.claimOriginalTransaction(original, customerId: record.id, at: now)
        _ = try tx.insertTransaction(
            NewTransaction(
                appId: appId,
                jws: SignedPayloadFiller.text("bench.\(id).jws", length: SignedPayloadFiller.transactionLength),
                fact: fact, source: "notification", receivedAt: now))
        let previous = try tx.customerInfo(customerId: record.id, environment: .production)
        let evaluation = EntitlementEngine.evaluate(
            customerId: record.appUserId, environment: .production, facts: try tx.facts(customerId: record.id),
            catalog: catalog, now: now, previous: previous?.info)
        _ = try tx.saveCustomerInfo(
            evaluation.customerInfo, customerId: record.id, expectedVersion: previous?.version, at: now)
        let events = try tx.appendEvents(evaluation.newEvents, customerId: record.id, at: now)
        try tx.enqueueDeliveries(of: events, appId: appId, at: now)
        try tx.finishNotification(id: notificationId, outcome: "processed", at: now)
        return true
    }

    static func seconds(_ duration: Duration) -> Double {
        duration / .seconds(1)
    }

    /// Linux `VmHWM` (peak resident set) of this process.
    static func peakResidentBytes() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kilobytes = line.split(separator: " ").compactMap { Int($0) }.first
            return kilobytes.map { $0 * 1024 }
        }
        return nil
    }
}
