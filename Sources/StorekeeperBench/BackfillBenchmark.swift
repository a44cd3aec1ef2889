import AppStoreModels
import AppStoreSimulator
import AppStoreTrust
import Entitlements
import Foundation
import Storage
import StorekeeperIngestion

/// `BENCH_ONLY=backfill`: the receipt backfill (issue 12) and status polling against the App
/// Store simulator on a loopback port, into a SQLite file, eight at a time as `storekeeper
/// backfill receipts` runs by default. The rate limits are lifted on both sides (the
/// simulator's `ServerAPIRateLimits.unlimited`, Storekeeper's limiter at 1000 times Apple's),
/// so the figures are Storekeeper's own ceiling, not Apple's pace.
///
/// The references: Apple's documented production limit (50 requests a second per endpoint;
/// a receipt with one purchase costs one Get All Subscription Statuses and one Get Transaction
/// History, so at most 50 receipts a second against Apple, and 50 polls a second), and the raw
/// durable SQLite commits of this disk (each receipt is at least one commit). `BENCH_BACKFILL_RECEIPTS`
/// (default 10,000) and `BENCH_POLLS` (default 2,000) set the sizes.
enum BackfillBenchmark {
    static let bundleId = "com.example.bench.backfill"
    static let appId = "bench-backfill"
    static let appleLimit = 50.0

    static func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let receipts = Int(environment["BENCH_BACKFILL_RECEIPTS"] ?? "") ?? 10_000
        let polls = Int(environment["BENCH_POLLS"] ?? "") ?? 2_000
        print("\n== Receipt backfill and status polling: \(receipts) receipts, \(polls) polls ==")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "storekeeper-bench-backfill-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let now = Timestamp(Date())
        let authority = try TestCertificateAuthority.generate(
            validFrom: now.adding(milliseconds: -86_400_000), validUntil: now.adding(milliseconds: 400 * 86_400_000))
        let apiKey = try PrivateKey.generateP256()
        let simulator = AppStoreSimulator(
            environment: .production, authority: authority, serverAPIRateLimits: .unlimited)
        let app = SimulatedApp(
            bundleId: bundleId, appAppleId: 1_000_000_001,
            products: [
                SimulatedProduct(
                    productId: "monthly", kind: .autoRenewable, groupId: "G1", period: .month,
                    prices: [Price(storefront: "USA", currency: "USD", price: 5_990)])
            ],
            apiKeys: [
                SimulatedApp.APIKey(keyId: "BENCHKEY01", issuerId: "bench-issuer", publicKeyPEM: apiKey.publicKey.pem)
            ]
        )
        try await simulator.addApp(app)
        var parsed: [ReceiptBackfill.Line] = []
        var originals: [String] = []
        for index in 0..<receipts {
            let user = "bench-\(index)"
            await simulator.addCustomer(SimulatedCustomer(id: user))
            _ = try await simulator.perform(SimulatorAction(.purchase, customer: user, productId: "monthly"))
            let der = try await simulator.appReceipt(customer: user, bundleId: bundleId)
            let text = Array("\(user)\t\(Data(der).base64EncodedString())".utf8)
            guard case .success(let line) = ReceiptBackfill.parse(text) else { fatalError("unparsable bench line") }
            parsed.append(line)
            originals += try AppReceipt(der: der).transactionIds
        }
        let server = try SimulatorServer(simulator: simulator, tickInterval: nil)
        defer { Task { await server.stop() } }

        let store = try await SQLiteStore.open(path: directory.appendingPathComponent("backfill.sqlite").path)
        let base = server.baseURL.absoluteString
        let settings = AppSettings(
            rootCertificatesPEM: [authority.root.pem],
            appStoreConnect: AppStoreConnectCredentials(
                keyId: "BENCHKEY01", issuerId: "bench-issuer", privateKeyPEM: apiKey.pkcs8PEM, baseURL: base))
        let record = AppRecord(
            id: appId, bundleId: bundleId, appAppleId: 1_000_000_001, environments: [.production],
            settings: settings.jsonValue)
        try await store.write { transaction in
            _ = try transaction.insertApp(record, at: now)
            _ = try transaction.saveCatalog(
                appId: record.id,
                ProductCatalog(products: [
                    CatalogProduct(
                        productId: "monthly", kind: .autoRenewable, subscriptionGroup: "G1", groupLevel: 1,
                        duration: SubscriptionPeriod(iso8601: "P1M"), entitlementIds: ["pro"])
                ]), at: now)
        }
        let ingestion = Ingestion(store: store, rateLimiters: AppStoreRateLimiters(share: 1000))
        let backfill = ReceiptBackfill(ingestion: ingestion, appId: appId)
        if environment["BENCH_NO_REFERENCE"] == nil {
            let reference = try RawCommitReference.sqlite(directory: directory)
            print("raw SQLite commits (WAL, synchronous=FULL, 1 INSERT each): \(format(reference)) commits/s")
        }
        print(
            "Apple's production limit (per endpoint)          : \(format(appleLimit)) requests/s"
                + " (2 a receipt, on two endpoints: \(Int(appleLimit)) receipts/s at most)")
        print("rate limits (simulator and Storekeeper)          : lifted")

        let lines = parsed
        var summary = BackfillSummary()
        let backfillSeconds = try await timed {
            summary = await concurrently(lines.count) { index in await backfill.importLine(lines[index]) }
        }
        print(
            "backfill receipts                                : \(format(Double(lines.count) / backfillSeconds)) receipts/s"
                + "  (\(summary.imported) imported, \(summary.unsuccessful) not, in \(String(format: "%.1f", backfillSeconds)) s)"
        )
        if summary.unsuccessful > 0 { print(summary.text) }

        let runtime = try await ingestion.apps.runtime(appId: appId)
        let sample = Array(originals.prefix(polls))
        var failures: [String: Int] = [:]
        let pollSeconds = try await timed {
            let outcomes = await concurrently(sample.count) { index -> String? in
                do throws(IngestionError) {
                    _ = try await ingestion.recovery.polling.poll(
                        app: runtime, environment: .production, originalTransactionId: sample[index])
                    return nil
                } catch {
                    return error.code.rawValue
                }
            }
            failures = outcomes
        }
        print(
            "status polling                                   : \(format(Double(sample.count) / pollSeconds)) polls/s"
                + "  (\(sample.count - failures.values.reduce(0, +)) applied, failures \(failures))")
        await store.close()
    }

    private static func timed(_ body: () async throws -> Void) async throws -> Double {
        let start = ContinuousClock.now
        try await body()
        return (ContinuousClock.now - start) / .seconds(1)
    }

    /// `body` for 0..<count, eight at a time; backfill outcomes counted.
    private static func concurrently(_ count: Int, _ body: @escaping @Sendable (Int) async -> ReceiptBackfill.Outcome)
        async -> BackfillSummary
    {
        await withTaskGroup(of: ReceiptBackfill.Outcome.self) { group in
            var summary = BackfillSummary()
            for index in 0..<count {
                if index >= 8, let outcome = await group.next() { summary.count(outcome) }
                group.addTask { await body(index) }
            }
            for await outcome in group { summary.count(outcome) }
            return summary
        }
    }

    /// `body` for 0..<count, eight at a time; failures counted by code.
    private static func concurrently(_ count: Int, _ body: @escaping @Sendable (Int) async -> String?) async
        -> [String: Int]
    {
        await withTaskGroup(of: String?.self) { group in
            var failures: [String: Int] = [:]
            for index in 0..<count {
                if index >= 8, let code = await group.next(), let code { failures[code, default: 0] += 1 }
                group.addTask { await body(index) }
            }
            for await code in group { if let code { failures[code, default: 0] += 1 } }
            return failures
        }
    }
}
