import AppStoreModels
import AppStoreSimulator
import AppStoreTrust
import Foundation
import Storage
import StorekeeperTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 12's migration from verifyReceipt (`storekeeper backfill receipts`) and issue 14's
/// progress output, by running the binary against a database and the App Store simulator.
///
/// The backfill runs at Apple's production limits (50 requests a second per endpoint, two
/// calls a receipt) against a simulator that enforces them: this suite imports 240 (killed and
/// interrupted on the way); `BackfillAtScaleCLITests` imports 10,000 with the limits lifted on
/// both sides, and `make bench` measures the rate.
@Suite(.serialized) struct BackfillCLITests {
    let cli = CLITests()

    /// Issue 12: the backfill gives each customer the CustomerInfo, events and facts that
    /// ingesting the same purchases directly gives; killed (SIGKILL) and interrupted (SIGINT)
    /// at random points and resumed, nothing is imported twice.
    @Test func backfillEqualsDirectIngestionAndResumesWithoutDoubling() async throws {
        let count = 240
        let world = try await BackfillWorld.make(customers: count)
        defer { Task { await world.server.stop() } }
        let directory = try cli.temporaryDirectory()
        let database = directory.appendingPathComponent("backfill.sqlite").path
        let store = try await world.makeDatabase(at: database)
        let export = directory.appendingPathComponent("export.tsv")
        try (world.exportLines.joined(separator: "\n") + "\n").write(to: export, atomically: true, encoding: .utf8)
        let arguments = [
            "backfill", "receipts", "--app", BackfillWorld.appId, "--database", database, "--rate-percent", "100",
            export.path,
        ]
        // Counted by the receipts stored (one per import), not by the resume table under test.
        func imported() async throws -> Int {
            try await store.read { try $0.receiptValidationCount(appId: BackfillWorld.appId) }
        }
        func run(until target: Int, then signal: Int32) async throws -> ChildProcess {
            let child = try ChildProcess(arguments, in: directory)
            let deadline = ContinuousClock.now + .seconds(120)
            while try await imported() < target, child.process.isRunning, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            child.signal(signal)
            return child
        }

        let killAt = Int.random(in: 20...90)
        let killed = try await run(until: killAt, then: SIGKILL)
        let killedExit = try await killed.exit()
        #expect(killedExit.signalled && killedExit.status == SIGKILL, "killed after \(killAt) lines")
        let afterKill = try await imported()
        #expect(afterKill >= killAt && afterKill < count)

        let interruptAt = afterKill + Int.random(in: 20...90)
        let interrupted = try await run(until: interruptAt, then: SIGINT)
        let interruptedExit = try await interrupted.exit()
        #expect(interruptedExit == (130, false), "interrupted at \(interruptAt) lines")
        let afterInterrupt = try await imported()
        #expect(afterInterrupt >= interruptAt && afterInterrupt < count)
        let interruptedErr = interrupted.stderr
        #expect(
            interruptedErr.hasSuffix(
                "the lines in progress were finished.\nTo resume, run the same command again: imported lines are skipped.\n"
            ))
        #expect(interruptedErr.contains(" (interrupted) in "))
        // Every line the interrupted run read is imported: it stopped after the lines in progress.
        let stoppedAfter = try #require(
            interruptedErr.firstMatch(of: /interrupted after line (\d+) of 240/).map { Int($0.1)! })
        #expect(stoppedAfter == afterInterrupt)
        #expect(interrupted.stdout.hasPrefix("imported: "))

        let finished = try ChildProcess(arguments, in: directory)
        #expect(try await finished.exit() == (0, false))
        #expect(
            finished.stdout
                == "imported: \(count - afterInterrupt)\nduplicates: \(afterInterrupt)\nrefused: 0\nfailed: 0\n")
        // Without a terminal: plain lines (no carriage return), the last one the total.
        let lines = finished.stderr.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.last == "")
        #expect(!finished.stderr.contains("\r"))
        for line in lines.dropLast(2) {
            #expect(line.wholeMatch(of: /backfill: \d+\/240 \(\d+%\), \d+\.\d\/s, ETA \S+/) != nil, "\(line)")
        }
        #expect(lines.dropLast().last?.wholeMatch(of: /backfill: 240\/240 \(100%\) in \S+, \d+\.\d\/s/) != nil)
        #expect(lines.count >= 3)
        #expect(!FileManager.default.fileExists(atPath: export.path + ".failed"))

        // Nothing doubled: one imported line and one stored receipt per customer.
        #expect(try await imported() == count)
        #expect(try await store.read { try $0.backfillLineCount(appId: BackfillWorld.appId) } == count)

        let direct = try await world.makeDatabase(at: directory.appendingPathComponent("direct.sqlite").path)
        try await world.ingestDirectly(into: direct)
        let expected = try await world.snapshots(direct)
        let actual = try await world.snapshots(store)
        #expect(expected.count == count)
        #expect(actual.count == count)
        for user in world.users {
            #expect(actual[user]?.state == expected[user]?.state, "\(user)")
        }
        // Nothing imported twice: each API answer is signed anew, so a line imported twice
        // would give its customer more facts than the others who bought the same.
        for kind in 0..<3 {
            let counts = Set(world.users.indices.filter { $0 % 3 == kind }.map { actual[world.users[$0]]?.factCount })
            #expect(counts.count == 1 && counts.first! != nil, "customers of kind \(kind): \(counts)")
        }
        // Not vacuous: every customer has "pro"; a lifetime buyer has "lifetime" too.
        for (index, user) in world.users.enumerated() {
            guard case .object(let info) = actual[user]?.info, case .object(let entitlements)? = info["entitlements"]
            else {
                Issue.record("\(user) has no entitlements")
                continue
            }
            #expect(entitlements.keys.sorted() == (index % 3 == 0 ? ["pro"] : ["lifetime", "pro"]), "\(user)")
        }
        await store.close()
        await direct.close()
    }

    /// Issue 12: bad lines are refused with their rule and written, after a comment naming the
    /// line and the rule, to the failed-lines file; issue 14: on a terminal the progress is one
    /// rewritten line.
    @Test func refusedLinesGoToTheFailedFileAndProgressRewritesOneLineOnATerminal() async throws {
        let world = try await BackfillWorld.make(customers: 3)
        defer { Task { await world.server.stop() } }
        // The same app and customer, receipts signed by a CA the app does not trust.
        let stranger = try await BackfillWorld.make(customers: 2)
        await stranger.server.stop()
        let directory = try cli.temporaryDirectory()
        let database = directory.appendingPathComponent("backfill.sqlite").path
        let store = try await world.makeDatabase(at: database)
        let receipt = { (user: String) in world.receipts[user]! }
        let tooLong = "user-2\t" + String(repeating: "A", count: 6_000_000)
        let lines = [
            "# exported 2026-11-30",
            "user-0\t\(receipt("user-0"))",
            "",
            "no tab here",
            "user-1\t!!!!notbase64",
            "user-1\t\(stranger.receipts["user-1"]!)",
            "bad/user\t\(receipt("user-1"))",
            "user-0\t\(receipt("user-0"))",
            tooLong,
            "user-2\t\(receipt("user-2"))\r",
        ]
        let export = directory.appendingPathComponent("export.tsv")
        try lines.joined(separator: "\n").write(to: export, atomically: true, encoding: .utf8)
        let failedOut = directory.appendingPathComponent("failed.tsv").path
        let terminal = try PseudoTerminal()
        let child = try ChildProcess(
            [
                "backfill", "receipts", "--app", BackfillWorld.appId, "--database", database, "--failed-out",
                failedOut, "--rate-percent", "100", export.path,
            ], in: directory, terminal: terminal)
        #expect(try await child.exit() == (1, false))
        #expect(
            child.stdout == """
                imported: 2
                duplicates: 1
                refused: 5
                  line.invalidAppUserId: 1
                  line.noTab: 1
                  line.notBase64: 1
                  line.tooLong: 1
                  receipt.chainUntrusted: 1
                failed: 0
                failed lines: \(failedOut)

                """)
        let maximum = 256 + 1 + ((4 << 20) + 2) / 3 * 4
        #expect(
            try String(contentsOfFile: failedOut, encoding: .utf8) == """
                # line 4: line.noTab: expected appUserId<TAB>base64 receipt
                no tab here
                # line 5: line.notBase64: the receipt is not base64
                user-1\t!!!!notbase64
                # line 6: receipt.chainUntrusted: The signed payload failed verification (receipt.chainUntrusted).
                user-1\t\(stranger.receipts["user-1"]!)
                # line 7: line.invalidAppUserId: appUserId must be 1 to 256 printable characters
                bad/user\t\(receipt("user-1"))
                # line 9: line.tooLong: the line exceeds \(maximum) bytes

                """)
        // The terminal shows renders of one line (carriage return, erase line), then the last.
        let shown = child.stderr
        #expect(
            shown.wholeMatch(
                of:
                    /(\r\u{1B}\[2Kbackfill \[[#.]{20}\] \d+\/10 \(\d+%\), \d+\.\d\/s(, ETA \S+)?)+\r\u{1B}\[2Kbackfill: 10\/10 \(100%\) in \S+, \d+\.\d\/s\r\n/
            ) != nil, "\(shown.debugDescription)")
        #expect(try await store.read { try $0.backfillLineCount(appId: BackfillWorld.appId) } == 2)
        await store.close()
    }

    /// Issue 14: `migrate` shows progress when there is work: plain lines at each tenth without a
    /// terminal, one rewritten line on a terminal; nothing when the schema is up to date.
    @Test func migrateShowsProgressWhenThereIsWork() async throws {
        let directory = try cli.temporaryDirectory()
        let total = Migration.all.count
        let plain = try ChildProcess(
            ["migrate", "--database", directory.appendingPathComponent("a.sqlite").path], in: directory)
        #expect(try await plain.exit() == (0, false))
        let lines = plain.stderr.split(separator: "\n").map(String.init)
        // A line each time another tenth is done, the last one by `finish`.
        let tenths = (1..<total).filter { $0 * 10 / total > ($0 - 1) * 10 / total }
        #expect(lines.count == tenths.count + 1, "\(lines)")
        for (line, done) in zip(lines, tenths) {
            #expect(
                line.wholeMatch(of: try Regex("migrate: \(done)/\(total) \\(\(done * 100 / total)%\\), .*")) != nil,
                "\(line)")
        }
        #expect(lines.last?.wholeMatch(of: try Regex("migrate: \(total)/\(total) \\(100%\\) in \\S+, .*/s")) != nil)
        #expect(
            plain.stdout.hasSuffix("schema up to date: \(total) migrations, latest \(Migration.all.last!.identifier)\n")
        )

        let terminal = try PseudoTerminal()
        let shown = try ChildProcess(
            ["migrate", "--database", directory.appendingPathComponent("b.sqlite").path], in: directory,
            terminal: terminal)
        #expect(try await shown.exit() == (0, false))
        #expect(
            shown.stderr.wholeMatch(
                of: try Regex(
                    "(\\r\\u{1B}\\[2Kmigrate \\[[#.]{20}\\] \\d+/\(total) .*)+\\r\\u{1B}\\[2Kmigrate: \(total)/\(total) \\(100%\\) in \\S+, \\S+/s\\r\\n"
                )) != nil, "\(shown.stderr.debugDescription)")

        let again = try ChildProcess(
            ["migrate", "--database", directory.appendingPathComponent("a.sqlite").path], in: directory)
        #expect(try await again.exit() == (0, false))
        #expect(again.stderr == "")
    }
}
