import AppStoreModels
import AppStoreTrust
import CSQLite
import Entitlements
import Foundation
import Storage
import StorekeeperIngestion

// As the server does: the figures are the server's.
AllocatorRetention.apply()

/// `make bench`: release-build figures printed beside a physical reference measured on the
/// same machine in the same run. Single-threaded unless stated.

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// Runs `body` repeatedly for about `budget` seconds; returns operations per second.
func rate(budget: Double = 2, _ body: () throws -> Void) rethrows -> Double {
    var count = 0
    var elapsed = 0.0
    while elapsed < budget {
        elapsed += try seconds {
            for _ in 0..<50 { try body() }
        }
        count += 50
    }
    return Double(count) / elapsed
}

func format(_ value: Double) -> String { String(format: "%10.0f", value) }

/// `openssl speed ecdsap256` verify/s on one core: the raw P-256 ceiling for this machine.
func opensslVerifyRate() -> Double? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
    process.arguments = ["speed", "-seconds", "3", "ecdsap256"]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return nil }
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    // "256 bits ecdsa (nistp256)   0.0000s   0.0001s  41234.5  12345.6": the last column is verify/s.
    guard let line = text.split(separator: "\n").first(where: { $0.contains("ecdsa (nistp256)") }),
        let last = line.split(separator: " ").last
    else { return nil }
    return Double(last)
}

func benchVerification() throws {
    print("== JWS verification (SignedDataVerifier, one core) ==")
    let signedDate = Timestamp(millisecondsSince1970: 1_764_547_200_000)
    let authority = try TestCertificateAuthority.generate(
        validFrom: signedDate.adding(milliseconds: -86_400_000),
        validUntil: signedDate.adding(milliseconds: 3_650 * 86_400_000))
    var payload = JWSTransactionDecodedPayload()
    payload.transactionId = "2000000000000001"
    payload.originalTransactionId = "2000000000000001"
    payload.bundleId = "com.example"
    payload.productId = "com.example.monthly"
    payload.type = RawEnum(.autoRenewableSubscription)
    payload.environment = RawEnum(.sandbox)
    payload.signedDate = signedDate
    payload.purchaseDate = signedDate
    payload.expiresDate = signedDate.adding(milliseconds: 30 * 86_400_000)
    payload.price = 9990
    payload.currency = "USD"
    let token = try authority.signer.sign(payload)
    let clock: @Sendable () -> Timestamp = { signedDate }

    let cached = try SignedDataVerifier(
        rootCertificates: [authority.root], bundleId: "com.example", appAppleId: nil, environment: .sandbox,
        clock: clock)
    // A zero maximum age makes every lookup miss: each verification validates the whole chain.
    let cold = try SignedDataVerifier(
        rootCertificates: [authority.root], bundleId: "com.example", appAppleId: nil, environment: .sandbox,
        cache: VerifiedChainCache(capacity: 1, maximumAgeSeconds: 0), clock: clock)
    _ = try cached.verifyAndDecodeTransaction(token)
    let coldRate = try rate { _ = try cold.verifyAndDecodeTransaction(token) }
    let cachedRate = try rate { _ = try cached.verifyAndDecodeTransaction(token) }
    print("cold chain (path validation + signature) : \(format(coldRate)) verifications/s")
    print("cached chain (signature only)            : \(format(cachedRate)) verifications/s")
    if ProcessInfo.processInfo.environment["BENCH_NO_REFERENCE"] == nil, let reference = opensslVerifyRate() {
        print("openssl speed ecdsap256 (raw verify)     : \(format(reference)) verify/s")
        print(
            String(
                format: "cached / openssl                         : %9.0f%%  (target >= 70%%)",
                cachedRate / reference * 100))
    } else {
        print("openssl speed ecdsap256                  : unavailable")
    }
}

func benchEngine() throws {
    print("\n== Entitlement engine (one customer per evaluation, one core) ==")
    let catalog = ProductCatalog(products: [
        CatalogProduct(
            productId: "monthly", kind: .autoRenewable, subscriptionGroup: "premium", groupLevel: 1,
            duration: SubscriptionPeriod(value: 1, unit: .month), entitlementIds: ["pro"],
            referencePrice: Money(milliunits: 9990, currency: "USD")),
        CatalogProduct(
            productId: "coins", kind: .consumable, entitlementIds: [],
            referencePrice: Money(milliunits: 990, currency: "USD")),
    ])
    let start: Int64 = 1_600_000_000_000
    let day: Int64 = 86_400_000
    var previousPerFact: Double?
    for count in [10, 100, 1_000] {
        var facts: [Fact] = []
        // Half monthly renewals in one chain, half consumables: both kinds of history grow.
        for index in 0..<count {
            var transaction = JWSTransactionDecodedPayload()
            let purchase = Timestamp(millisecondsSince1970: start + Int64(index) * 30 * day)
            transaction.transactionId = String(3_000_000_000 + index)
            transaction.bundleId = "com.example"
            transaction.purchaseDate = purchase
            transaction.signedDate = purchase
            transaction.environment = RawEnum(.production)
            transaction.inAppOwnershipType = RawEnum(.purchased)
            transaction.price = 9990
            transaction.currency = "USD"
            if index % 2 == 0 {
                transaction.originalTransactionId = "3000000000"
                transaction.productId = "monthly"
                transaction.type = RawEnum(.autoRenewableSubscription)
                transaction.originalPurchaseDate = Timestamp(millisecondsSince1970: start)
                transaction.expiresDate = purchase.adding(milliseconds: 60 * day)
                transaction.transactionReason = RawEnum(index == 0 ? .purchase : .renewal)
            } else {
                transaction.originalTransactionId = transaction.transactionId
                transaction.productId = "coins"
                transaction.type = RawEnum(.consumable)
            }
            facts.append(try Fact(transaction: transaction))
        }
        let now = Timestamp(millisecondsSince1970: start + Int64(count) * 30 * day)
        let perSecond = rate(budget: 2) {
            _ = EntitlementEngine.evaluate(
                customerId: "c", environment: .production, facts: facts, catalog: catalog, now: now)
        }
        let microsecondsPerFact = 1e6 / perSecond / Double(count)
        var growth = ""
        if let previousPerFact {
            growth = String(format: "  (x%.2f per fact vs previous size)", microsecondsPerFact / previousPerFact)
        }
        previousPerFact = microsecondsPerFact
        print(
            String(
                format: "%5d transactions/customer: %10.0f customers/s  %7.2f µs per fact", count, perSecond,
                microsecondsPerFact) + growth)
    }
    print("linear growth shows as a per-fact cost that stays roughly constant across sizes")
}

/// Storage at one size in this process (peak RSS is per process, so each size runs alone):
/// bulk import, CustomerInfo lookups with p50/p99, durable ingestion commits.
func benchStorage() async throws {
    let environment = ProcessInfo.processInfo.environment
    let transactions = Int(environment["BENCH_STORAGE_TRANSACTIONS"] ?? "") ?? 1_000_000
    let customers = Int(environment["BENCH_STORAGE_CUSTOMERS"] ?? "") ?? 100_000
    print("\n== Storage: \(transactions) transactions / \(customers) customers ==")
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "storekeeper-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    var stores: [(String, any Store)] = []
    if environment["BENCH_STORAGE_ENGINE"] != "postgres" {
        stores.append(
            ("sqlite", try await SQLiteStore.open(path: directory.appendingPathComponent("bench.sqlite").path)))
    }
    if environment["BENCH_STORAGE_ENGINE"] != "sqlite", let url = environment["STOREKEEPER_BENCH_POSTGRES_URL"] {
        stores.append(("postgres", try await PostgresStore.open(url: url)))
    }
    let databasePath = directory.appendingPathComponent("bench.sqlite").path
    for (engine, store) in stores {
        var diskBytesPerSecond: Double?
        if environment["BENCH_NO_REFERENCE"] == nil {
            // The physical references: durable single-row commits with nothing of ours in the way.
            let reference: Double
            if engine == "sqlite" {
                reference = try RawCommitReference.sqlite(directory: directory)
                print("raw SQLite commits (WAL, synchronous=FULL, 1 INSERT each): \(format(reference)) commits/s")
                diskBytesPerSecond = try DiskWriteReference.sequential(directory: directory)
                print(
                    "disk, sequential writes then fdatasync (dd bs=1M)    : "
                        + String(format: "%.0f MB/s", diskBytesPerSecond! / 1_000_000))
            } else {
                reference = try RawCommitReference.postgres(url: environment["STOREKEEPER_BENCH_POSTGRES_URL"] ?? "")
                print("raw PostgreSQL commits (1 libpq client, 1 INSERT each)   : \(format(reference)) commits/s")
            }
        }
        let result = try await StoreBenchmark.run(
            store: store, transactions: transactions, customers: customers,
            bytesOnDisk: engine == "sqlite" ? { sqliteDatabaseBytes(path: databasePath) } : nil)
        print(result)
        if let bytes = result.importBytes, let diskBytesPerSecond, bytes > 0 {
            // Every page the import adds is written twice: to the WAL, then by the checkpoint.
            let perRow = Double(bytes) / Double(result.transactions)
            let ceiling = diskBytesPerSecond / (2 * perRow)
            print(
                String(
                    format:
                        "import: the database grew %.0f bytes a row (a 3.4 KB signed transaction, its 2.2 KB header stored once);"
                        + " written twice"
                        + " (WAL, checkpoint), the disk allows %.0f rows/s: the import reached %.0f%% of it",
                    perRow, ceiling, 100 * result.importRowsPerSecond / ceiling))
        }
        await store.close()
    }
}

/// The size of the SQLite database at `path` as a reader sees it now (pages still in the WAL
/// included), or 0 if it cannot be read.
func sqliteDatabaseBytes(path: String) -> Int64 {
    var handle: OpaquePointer?
    defer { sqlite3_close_v2(handle) }
    guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let db = handle else { return 0 }
    func pragma(_ name: String) -> Int64 {
        var statement: OpaquePointer?
        defer { sqlite3_finalize(statement) }
        guard sqlite3_prepare_v2(db, "PRAGMA \(name)", -1, &statement, nil) == SQLITE_OK,
            sqlite3_step(statement) == SQLITE_ROW
        else { return 0 }
        return sqlite3_column_int64(statement, 0)
    }
    return pragma("page_count") * pragma("page_size")
}

// `StorekeeperBench prepare-http …` / `raw-commits …`: scripts/bench-ingestion.sh (HTTPWorkload.swift).
if CommandLine.arguments.count > 1 {
    let arguments = CommandLine.arguments
    exit(await HTTPWorkload.run(command: arguments[1], arguments: Array(arguments.dropFirst(2))))
}

// BENCH_ONLY=verification|engine|worstcase|storage|backfill runs one part (for profiling, and storage sizes in
// separate processes so each peak RSS belongs to one size).
let only = ProcessInfo.processInfo.environment["BENCH_ONLY"]
if only == nil || only == "verification" { try benchVerification() }
if only == nil || only == "engine" { try benchEngine() }
if only == nil || only == "worstcase" { try await WorstCaseBenchmark.run() }
if only == "storage" { try await benchStorage() }
if only == nil || only == "analytics" {
    print("== Analytics (reads behind each request, over the daily aggregates) ==")
    let customers = Int(ProcessInfo.processInfo.environment["BENCH_ANALYTICS_CUSTOMERS"] ?? "") ?? 100_000
    // BENCH_ANALYTICS_ENGINE=sqlite|postgres runs one engine only.
    let engine = ProcessInfo.processInfo.environment["BENCH_ANALYTICS_ENGINE"]
    if engine != "postgres" {
        try await benchAnalyticsSQLite(customers: customers)
    }
    if engine != "sqlite", let url = ProcessInfo.processInfo.environment["STOREKEEPER_BENCH_POSTGRES_URL"], !url.isEmpty
    {
        let postgres = try await StoreLocation(url).open()
        try await AnalyticsBenchmark.run(store: postgres, customers: customers, label: "PostgreSQL")
        await postgres.close()
    }
}

func benchAnalyticsSQLite(customers: Int) async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sk-analytics-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let sqlite = try await StoreLocation(directory.appendingPathComponent("bench.db").path).open()
    try await AnalyticsBenchmark.run(store: sqlite, customers: customers, label: "SQLite")
    await sqlite.close()
    // BENCH_KEEP=1 keeps the store for a look at its query plans (`sqlite3 PATH`).
    if ProcessInfo.processInfo.environment["BENCH_KEEP"] == "1" {
        print("  kept \(directory.appendingPathComponent("bench.db").path)")
    } else {
        try? FileManager.default.removeItem(at: directory)
    }
}
// Minutes at Apple's rate limits: `make bench` runs it on its own.
if only == "backfill" { try await BackfillBenchmark.run() }
