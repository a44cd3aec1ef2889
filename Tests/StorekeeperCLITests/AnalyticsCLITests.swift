import AppStoreModels
import Entitlements
import Foundation
import Storage
import StorekeeperTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `storekeeper analytics rebuild`, run as the real binary on a SQLite file holding facts but no
/// aggregates yet: the first run reports a change, the second none; an unknown app is exit 1;
/// progress goes to standard error (issue 14) and Ctrl-C stops after the batch in progress.
@Suite(.serialized) struct AnalyticsCLITests {
    static let appId = "cli-app"

    /// A SQLite file with the app and `customers` customers, each with one monthly purchase on
    /// one of the first five days of December 2025, and no aggregates.
    static func database(customers: Int, in directory: URL) async throws -> String {
        let path = directory.appendingPathComponent("store.db").path
        let store = try await SQLiteStore.open(path: path)
        let start = TestSigning.signedDate
        let appId = Self.appId
        try await store.write { transaction in
            try transaction.saveApp(
                AppRecord(id: appId, bundleId: "com.example", environments: [.sandbox]), at: start)
            for index in 0..<customers {
                let customer = try transaction.ensureCustomer(appId: appId, appUserId: "user-\(index)", at: start)
                let id = "\(index + 1)"
                let purchase = start.adding(milliseconds: Int64(index % 5) * 86_400_000)
                try transaction.claimOriginalTransaction(id, customerId: customer.id, at: start)
                _ = try transaction.insertTransaction(
                    NewTransaction(
                        appId: appId, jws: "jws.\(id)",
                        fact: TransactionFact(
                            transactionId: id, originalTransactionId: id, productId: "monthly",
                            productKind: .autoRenewable, purchaseDate: purchase,
                            expiresDate: purchase.adding(milliseconds: 30 * 86_400_000), signedDate: purchase,
                            environment: .sandbox, price: 9990, currency: "USD"),
                        source: "test", receivedAt: start))
            }
        }
        await store.close()
        return path
    }

    @Test func rebuildSaysWhetherTheAggregatesChanged() async throws {
        let directory = try CLITests().temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try await Self.database(customers: 1, in: directory)

        let secrets = SecretsCLITests()
        let first = try secrets.run(["analytics", "rebuild", "--app", Self.appId, "--database", path])
        #expect(first.status == 0)
        #expect(first.stdout == "changed: 1 customers, 0 daily rows before, 2 after\n")
        // Without a terminal: no progress line before the total, then the final line.
        #expect(
            first.stderr.wholeMatch(of: /rebuild: 1\/1 \(100%\) in \d+\.\ds, \d+\.\d\/s\n/) != nil, "\(first.stderr)")
        let second = try secrets.run(["analytics", "rebuild", "--app", Self.appId, "--database", path])
        #expect(second.status == 0)
        #expect(second.stdout == "unchanged: 1 customers, 2 daily rows before, 2 after\n")
        let unknown = try secrets.run(["analytics", "rebuild", "--app", "nope", "--database", path])
        #expect(unknown == .init(status: 1, stdout: "", stderr: "error: no app nope\n"))
    }

    /// `analytics rates import`: refused without a reporting currency; then a file's rates are
    /// added (one replacing the stored rate of the same currency and day), and a file with a bad
    /// line changes nothing and names the line.
    @Test func ratesImportAddsAFilesRatesOrNothing() async throws {
        let directory = try CLITests().temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try await Self.database(customers: 1, in: directory)
        let file = directory.appendingPathComponent("rates.csv")
        try "date,currency,rate\r\n2026-01-01,EUR,1.0842\r\n\r\n2026-02-01,EUR,1.1\r\n2026-01-01,JPY,0.006512\r\n"
            .write(to: file, atomically: true, encoding: .utf8)
        let cli = SecretsCLITests()
        let arguments = ["analytics", "rates", "import", "--app", Self.appId, "--database", path, file.path]

        let noCurrency = try cli.run(arguments)
        #expect(
            noCurrency
                == .init(
                    status: 1, stdout: "",
                    stderr: "error: app cli-app has no reporting currency: set it first (analytics-settings)\n"))

        let store = try await SQLiteStore.open(path: path)
        let appId = Self.appId
        try await store.write { transaction in
            _ = try transaction.saveAnalyticsSettings(
                appId: appId,
                AnalyticsSettings(
                    reportingCurrency: "USD",
                    exchangeRates: [
                        ExchangeRate(
                            currency: "EUR", from: CalendarDay(year: 2026, month: 1, day: 1), micros: 1_050_000),
                        ExchangeRate(
                            currency: "GBP", from: CalendarDay(year: 2025, month: 6, day: 1), micros: 1_270_000),
                    ]), at: TestSigning.signedDate)
        }
        await store.close()

        let imported = try cli.run(arguments)
        #expect(
            imported
                == .init(
                    status: 0,
                    stdout: "imported 3 rates to USD (2 new, 1 replaced) for EUR, JPY; settings version 2\n",
                    stderr: ""))
        func stored() async throws -> StoredAnalyticsSettings? {
            let store = try await SQLiteStore.open(path: path)
            let settings = try await store.read { reader in try reader.analyticsSettings(appId: appId) }
            await store.close()
            return settings
        }
        #expect(
            try await stored()?.settings.exchangeRates == [
                ExchangeRate(currency: "EUR", from: CalendarDay(year: 2026, month: 1, day: 1), micros: 1_084_200),
                ExchangeRate(currency: "EUR", from: CalendarDay(year: 2026, month: 2, day: 1), micros: 1_100_000),
                ExchangeRate(currency: "GBP", from: CalendarDay(year: 2025, month: 6, day: 1), micros: 1_270_000),
                ExchangeRate(currency: "JPY", from: CalendarDay(year: 2026, month: 1, day: 1), micros: 6_512),
            ])

        for (content, message) in [
            ("2026-01-01,EUR,1.2\n2026-13-01,EUR,1\n", "line 2: date must be YYYY-MM-DD"),
            ("2026-01-01,eur,1.2\n", "line 1: currency must be three capital letters (ISO 4217)"),
            ("2026-01-01,USD,1\n", "line 1: USD is the reporting currency"),
            ("2026-01-01,EUR,1.1234567\n", "line 1: rate must be a positive decimal with at most 6 decimals"),
            ("2026-01-01,EUR,0\n", "line 1: rate must be a positive decimal with at most 6 decimals"),
            ("2026-01-01,EUR\n", "line 1: expected date,currency,rate"),
            ("2026-01-01,EUR,1\n2026-01-01,EUR,2\n", "line 2: a second rate for EUR from 2026-01-01"),
            (String(repeating: "9", count: 300) + "\n", "line 1: longer than 200 bytes"),
        ] {
            try content.write(to: file, atomically: true, encoding: .utf8)
            let refused = try cli.run(arguments)
            #expect(
                refused == .init(status: 1, stdout: "", stderr: "error: \(file.path): \(message); nothing imported\n"))
        }
        #expect(try await stored()?.version == 2)
        let missing = try cli.run(["analytics", "rates", "import", "--app", Self.appId, "--database", path])
        #expect(missing.status == 2)
    }

    /// Issue 14: 2,000 customers, interrupted (SIGINT) once the first tenth is reported: the run
    /// stops after the batch in progress with exit 130 and says how to complete it; the next run
    /// completes it (the customers done are found unchanged), and a third finds nothing to do.
    @Test func interruptedRebuildStopsAfterTheBatchAndTheNextRunCompletesIt() async throws {
        let count = 2000
        let directory = try CLITests().temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try await Self.database(customers: count, in: directory)
        let arguments = ["analytics", "rebuild", "--app", Self.appId, "--database", path]

        let interrupted = try ChildProcess(arguments, in: directory)
        let deadline = ContinuousClock.now + .seconds(120)
        while !interrupted.stderr.contains("rebuild: "), interrupted.process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        interrupted.signal(SIGINT)
        #expect(try await interrupted.exit() == (130, false))
        let stopped = try #require(
            interrupted.stdout.wholeMatch(of: /stopped: (\d+) customers recomputed, (\d+) changed\n/),
            "\(interrupted.stdout)")
        let done = try #require(Int(stopped.1))
        // Whole batches of 100, at least the tenth reported, not all.
        #expect(done % 100 == 0 && done >= 200 && done < count, "\(done)")
        #expect(Int(stopped.2) == done)
        let lines = interrupted.stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(
            Array(lines.suffix(3)) == [
                "interrupted after \(done) customers: the aggregates are consistent for every customer recomputed.",
                "To complete the rebuild, run the same command again.", "",
            ])
        #expect(
            lines.dropLast(3).last?.wholeMatch(
                of: /rebuild: \d+\/2000 \(\d+%\) \(interrupted\) in \d+\.\ds, \d+\.\d\/s/) != nil,
            "\(interrupted.stderr)")

        let cli = SecretsCLITests()
        let completed = try cli.run(arguments)
        #expect(completed.status == 0)
        let changed = try #require(
            completed.stdout.wholeMatch(of: /changed: 2000 customers, (\d+) daily rows before, (\d+) after\n/),
            "\(completed.stdout)")
        // Five purchase days: each has a revenue row and a row where its subscriptions end.
        #expect(Int(changed.2) == 10)
        #expect(Int(changed.1) == 10)
        for line in completed.stderr.split(separator: "\n").dropLast() {
            #expect(line.wholeMatch(of: /rebuild: \d+\/2000 \(\d+%\), \d+\.\d\/s, ETA \S+/) != nil, "\(line)")
        }
        #expect(
            completed.stderr.split(separator: "\n").last?.wholeMatch(
                of: /rebuild: 2000\/2000 \(100%\) in \S+, \d+\.\d\/s/) != nil)
        let again = try cli.run(arguments)
        #expect(again.stdout == "unchanged: 2000 customers, 10 daily rows before, 10 after\n")
    }
}
