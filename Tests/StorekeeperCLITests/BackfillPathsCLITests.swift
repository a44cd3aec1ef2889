import AppStoreModels
import AppStoreSimulator
import Foundation
import Storage
import StorekeeperTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 12's backfill by the binary on its other paths: an app without an App Store Connect key
/// (the receipts go to verifyReceipt with the shared secret), and PostgreSQL, where two runs of
/// the same export at once still import each line once.
@Suite(.serialized) struct BackfillPathsCLITests {
    let cli = CLITests()

    func entitlements(_ snapshot: BackfillWorld.Snapshot?) -> JSONValue? {
        guard case .object(let info)? = snapshot?.info else { return nil }
        return info["entitlements"]
    }

    /// Without a key nothing goes to the Server API: each receipt goes to the simulator's
    /// verifyReceipt with the app's shared secret, and every customer ends with the entitlements
    /// (product, dates, renewal) that the Server API path gives the same purchases.
    @Test func withoutAKeyTheReceiptsGoToVerifyReceipt() async throws {
        let count = 30
        let world = try await BackfillWorld.make(customers: count)
        defer { Task { await world.server.stop() } }
        let directory = try cli.temporaryDirectory()
        let database = directory.appendingPathComponent("keyless.sqlite").path
        let store = try await world.makeDatabase(at: database, withKey: false)
        let export = directory.appendingPathComponent("export.tsv")
        try (world.exportLines.joined(separator: "\n") + "\n").write(to: export, atomically: true, encoding: .utf8)
        let run = try ChildProcess(
            ["backfill", "receipts", "--app", BackfillWorld.appId, "--database", database, export.path], in: directory)
        #expect(try await run.exit() == (0, false))
        #expect(run.stdout == "imported: \(count)\nduplicates: 0\nrefused: 0\nfailed: 0\n")
        #expect(await world.simulator.serverAPICalls().isEmpty)
        #expect(try await store.read { try $0.backfillLineCount(appId: BackfillWorld.appId) } == count)

        // A second run finds every line imported and asks Apple nothing.
        let again = try ChildProcess(
            ["backfill", "receipts", "--app", BackfillWorld.appId, "--database", database, export.path], in: directory)
        #expect(try await again.exit() == (0, false))
        #expect(again.stdout == "imported: 0\nduplicates: \(count)\nrefused: 0\nfailed: 0\n")

        let keyless = try await world.snapshots(store)
        let direct = try await world.makeDatabase(at: directory.appendingPathComponent("direct.sqlite").path)
        try await world.ingestDirectly(into: direct)
        let expected = try await world.snapshots(direct)
        #expect(keyless.count == count)
        for user in world.users {
            #expect(entitlements(keyless[user]) != nil)
            #expect(entitlements(keyless[user]) == entitlements(expected[user]), "\(user)")
        }
        await store.close()
        await direct.close()
    }

    /// On PostgreSQL two runs of one export at once (two operators, or a run restarted while the
    /// first still ran) import each line once between them: the line's record is written with its
    /// facts, and the second commit of a line is refused as a duplicate.
    @Test(.enabled(if: TestDatabase.postgresURL != nil, Comment(rawValue: TestDatabase.postgresSkip)))
    func twoRunsAtOnceOnPostgreSQLImportEachLineOnce() async throws {
        let count = 90
        let world = try await BackfillWorld.make(
            customers: count, rateLimits: ServerAPIRateLimits(percent: 1_000))
        defer { Task { await world.server.stop() } }
        let name = "sk_backfill_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let server = try #require(TestDatabase.postgresURL)
        let url = try PostgresDatabases.create(name, on: server)
        defer { try? PostgresDatabases.drop(name, on: server) }
        let store = try await world.makeDatabase(at: url)
        let directory = try cli.temporaryDirectory()
        let export = directory.appendingPathComponent("export.tsv")
        try (world.exportLines.joined(separator: "\n") + "\n").write(to: export, atomically: true, encoding: .utf8)
        func run(_ failedOut: String) throws -> ChildProcess {
            try ChildProcess(
                [
                    "backfill", "receipts", "--app", BackfillWorld.appId, "--database", url, "--rate-percent", "1000",
                    "--failed-out", directory.appendingPathComponent(failedOut).path, export.path,
                ], in: directory)
        }
        let (first, second) = (try run("first.failed"), try run("second.failed"))
        #expect(try await first.exit() == (0, false))
        #expect(try await second.exit() == (0, false))
        func counts(_ output: String) -> (imported: Int, duplicates: Int)? {
            output.wholeMatch(of: /imported: (\d+)\nduplicates: (\d+)\nrefused: 0\nfailed: 0\n/).map {
                (Int($0.1)!, Int($0.2)!)
            }
        }
        let (a, b) = (try #require(counts(first.stdout)), try #require(counts(second.stdout)))
        #expect(a.imported + a.duplicates == count)
        #expect(b.imported + b.duplicates == count)
        #expect(a.imported + b.imported == count, "\(a) \(b)")
        #expect(try await store.read { try $0.backfillLineCount(appId: BackfillWorld.appId) } == count)
        #expect(try await store.read { try $0.receiptValidationCount(appId: BackfillWorld.appId) } == count)

        let actual = try await world.snapshots(store)
        let direct = try await world.makeDatabase(at: directory.appendingPathComponent("direct.sqlite").path)
        try await world.ingestDirectly(into: direct, rateShare: 10)
        let expected = try await world.snapshots(direct)
        for user in world.users {
            #expect(actual[user] != nil && actual[user]?.state == expected[user]?.state, "\(user)")
        }
        for kind in 0..<3 {
            let counts = Set(world.users.indices.filter { $0 % 3 == kind }.map { actual[world.users[$0]]?.factCount })
            #expect(counts.count == 1 && counts.first! != nil, "customers of kind \(kind): \(counts)")
        }
        await store.close()
        await direct.close()
    }
}
