import AppStoreModels
import AppStoreSimulator
import Foundation
import Storage
import StorekeeperTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 12's acceptance at its size: a backfill of 10,000 receipts from the simulator, run by
/// the binary, interrupted and resumed, with every kind of outcome counted exactly.
///
/// At Apple's limits (50 requests a second per endpoint, two calls a purchase) 10,000 receipts
/// take over four minutes whatever the machine; the simulator's limits are lifted to 20 times
/// Apple's (`ServerAPIRateLimits`) and the backfill is given the matching `--rate-percent`, so
/// what is measured is Storekeeper's own work.
@Suite(.serialized) struct BackfillAtScaleCLITests {
    let cli = CLITests()

    /// The issue's 10,000 receipts, in `make test`: about three minutes on two cores (the
    /// simulator's customers, two runs, the checks), since the layers they go through are
    /// compiled optimised in debug builds too (Package.swift).
    static let receiptCount = 10_000

    @Test func tenThousandReceiptsInterruptedAndResumedWithExactCounts() async throws {
        let count = Self.receiptCount
        let percent = 2_000
        let start = ContinuousClock.now
        let world = try await BackfillWorld.make(
            customers: count, rateLimits: ServerAPIRateLimits(percent: Double(percent)))
        defer { Task { await world.server.stop() } }
        // Trusted receipts whose purchases this App Store does not know (failed), and receipts
        // signed by a CA the app does not trust (refused).
        let ghosts = try await BackfillWorld.make(
            customers: 6, authority: world.authority, identifiersAfter: 900_000_000)
        await ghosts.server.stop()
        let strangers = try await BackfillWorld.make(customers: 4)
        await strangers.server.stop()
        let built = ContinuousClock.now

        // The export: every customer's line, and among them at fixed places the bad lines and,
        // at the end, 25 lines given a second time.
        var lines: [String] = []
        var kinds: [String] = []  // per line: "good", "ghost", "stranger", "noTab", "again"
        for (index, line) in world.exportLines.enumerated() {
            lines.append(line)
            kinds.append("good")
            if index % 1_500 == 700 {
                let ghost = ghosts.users[lines.count % ghosts.users.count]
                lines.append("ghost-\(index)\t\(ghosts.receipts[ghost]!)")
                kinds.append("ghost")
            }
            if index % 2_500 == 1_200 {
                lines.append("stranger-\(index)\t\(strangers.receipts[strangers.users[index / 2_500]]!)")
                kinds.append("stranger")
            }
            if index % 2_000 == 1_900 {
                lines.append("no tab on line \(index)")
                kinds.append("noTab")
            }
        }
        for line in world.exportLines.prefix(25) {
            lines.append(line)
            kinds.append("again")
        }
        let total = lines.count
        // At fixed places: 7, 4 and 5 of them in 10,000 lines.
        let expectedBad = (
            ghost: (0..<count).filter { $0 % 1_500 == 700 }.count,
            stranger: (0..<count).filter { $0 % 2_500 == 1_200 }.count,
            noTab: (0..<count).filter { $0 % 2_000 == 1_900 }.count
        )
        let placed: [Int] = [expectedBad.ghost, expectedBad.stranger, expectedBad.noTab]
        #expect(placed == [7, 4, 5])
        #expect(kinds.filter { $0 == "ghost" }.count == expectedBad.ghost)
        #expect(kinds.filter { $0 == "stranger" }.count == expectedBad.stranger)
        #expect(kinds.filter { $0 == "noTab" }.count == expectedBad.noTab)
        #expect(total == count + expectedBad.ghost + expectedBad.stranger + expectedBad.noTab + 25)

        let directory = try cli.temporaryDirectory()
        let database = directory.appendingPathComponent("backfill.sqlite").path
        let store = try await world.makeDatabase(at: database)
        let export = directory.appendingPathComponent("export.tsv")
        try (lines.joined(separator: "\n") + "\n").write(to: export, atomically: true, encoding: .utf8)
        let arguments = [
            "backfill", "receipts", "--app", BackfillWorld.appId, "--database", database, "--rate-percent",
            String(percent), "--jobs", "16", export.path,
        ]
        func imported() async throws -> Int {
            try await store.read { try $0.receiptValidationCount(appId: BackfillWorld.appId) }
        }
        /// The summary a run prints for lines `range` (1-based) of the export, `before` lines
        /// having been imported before it.
        func summary(lines range: ClosedRange<Int>, importedBefore before: Int) -> String {
            let seen = kinds[(range.lowerBound - 1)..<range.upperBound]
            let good = seen.filter { $0 == "good" }.count
            var text = "imported: \(good - before)\nduplicates: \(before + seen.filter { $0 == "again" }.count)\n"
            let (noTab, stranger) = (seen.filter { $0 == "noTab" }.count, seen.filter { $0 == "stranger" }.count)
            text += "refused: \(noTab + stranger)\n"
            if noTab > 0 { text += "  line.noTab: \(noTab)\n" }
            if stranger > 0 { text += "  receipt.chainUntrusted: \(stranger)\n" }
            let ghost = seen.filter { $0 == "ghost" }.count
            text += "failed: \(ghost)\n"
            if ghost > 0 { text += "  transaction_not_found: \(ghost)\n" }
            if noTab + stranger + ghost > 0 { text += "failed lines: \(export.path).failed\n" }
            return text
        }

        // Interrupted (Ctrl-C) at a random point: it finishes the lines in progress.
        let interruptAt = Int.random(in: (count / 5)...(count * 3 / 5))
        let interrupted = try ChildProcess(arguments, in: directory)
        // Generous bounds: a shared 2-core machine runs this debug build at about 70 lines a second.
        let deadline = ContinuousClock.now + .seconds(600)
        // Every 100 ms: each look counts the stored receipts, and a reader held on the database
        // a hundred times a second keeps the writer's log from being checkpointed.
        while try await imported() < interruptAt, interrupted.process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        interrupted.signal(SIGINT)
        #expect(try await interrupted.exit(timeout: .seconds(600)) == (130, false), "interrupted at \(interruptAt)")
        let afterInterrupt = try await imported()
        let stoppedAfter = try #require(
            interrupted.stderr.firstMatch(of: /interrupted after line (\d+) of (\d+)/).map { (Int($0.1)!, Int($0.2)!) })
        #expect(stoppedAfter.1 == total)
        #expect(afterInterrupt >= interruptAt && afterInterrupt < count)
        #expect(interrupted.stdout == summary(lines: 1...stoppedAfter.0, importedBefore: 0))
        let interruptedAt = ContinuousClock.now

        // Resumed: what was imported is known and skipped; the rest is imported once.
        let resumed = try ChildProcess(arguments, in: directory)
        #expect(try await resumed.exit(timeout: .seconds(600)) == (1, false))
        #expect(resumed.stdout == summary(lines: 1...total, importedBefore: afterInterrupt))
        let finished = ContinuousClock.now
        let failedLines = try String(contentsOfFile: export.path + ".failed", encoding: .utf8)
        #expect(
            failedLines.split(separator: "\n").filter { $0.hasPrefix("# line ") }.count
                == expectedBad.ghost + expectedBad.stranger + expectedBad.noTab)
        #expect(try await imported() == count)
        #expect(try await store.read { try $0.backfillLineCount(appId: BackfillWorld.appId) } == count)

        // Every customer has what was bought, and the same number of facts as every other
        // customer who bought the same (a line imported twice would have more).
        let actual = try await world.snapshots(store)
        #expect(actual.count == count)
        for kind in 0..<3 {
            let users = world.users.indices.filter { $0 % 3 == kind }.map { world.users[$0] }
            let counts = Set(users.map { actual[$0]?.factCount })
            #expect(counts.count == 1 && counts.first! != nil, "customers of kind \(kind): \(counts)")
            let expected = kind == 0 ? ["pro"] : ["lifetime", "pro"]
            let entitlements = Set(
                users.map { user -> [String] in
                    guard case .object(let info) = actual[user]?.info,
                        case .object(let entitlements)? = info["entitlements"]
                    else { return [] }
                    return entitlements.keys.sorted()
                })
            #expect(entitlements == [expected], "customers of kind \(kind)")
        }
        // A random sample equals ingesting the same purchases directly.
        let sample = Array(world.users.shuffled().prefix(150))
        let direct = try await world.makeDatabase(at: directory.appendingPathComponent("direct.sqlite").path)
        try await world.ingestDirectly(into: direct, only: sample, rateShare: Double(percent) / 100)
        let expected = try await world.snapshots(direct, only: sample)
        #expect(expected.count == sample.count)
        for user in sample {
            #expect(actual[user]?.state == expected[user]?.state, "\(user)")
        }
        await store.close()
        await direct.close()
        func seconds(_ duration: Duration) -> String {
            String(
                format: "%.1f s", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
        }
        print(
            "backfill at scale: simulator world \(seconds(built - start)), interrupted run \(seconds(interruptedAt - built)),"
                + " resumed run \(seconds(finished - interruptedAt)), checks \(seconds(ContinuousClock.now - finished))"
        )
    }
}
