import AppStoreModels
import Foundation
import SecretSealing
import Storage
import StorekeeperIngestion
import StorekeeperServer

/// `storekeeper backfill receipts --app ID FILE`: the migration from verifyReceipt. Reads an
/// export of `appUserId<TAB>base64 receipt` lines and imports each for its user through
/// `ReceiptBackfill` (verified locally, completed from the App Store, committed through the
/// one commit path), straight against the database of the configuration `serve` uses.
///
/// Lines run `--jobs` at a time and are reported in file order; blank lines and lines starting
/// with `#` are skipped. Ctrl-C stops after the lines in progress; running the command again
/// resumes (imported lines are recorded with their facts and skipped). Refused and failed lines
/// go to the failed-lines file, each after a `# line N: rule: message` comment, so the file can
/// be fixed and given back as FILE.
enum BackfillCommand {
    static let command: Command = Command(
        name: "backfill", summary: "import purchases from a verifyReceipt-era export (docs/recovery.md)",
        subcommands: [
            Command(
                name: "receipts",
                summary: "import appUserId<TAB>base64 receipt lines for an app; resumable",
                discussion: """
                    Each receipt is verified locally, its purchases fetched from the App Store Server API
                    (verifyReceipt with the shared secret when the app has no key) at --rate-percent of
                    Apple's limits, and committed for the user. Progress on standard error; the summary on
                    standard output. Ctrl-C stops after the lines in progress; run the same command again
                    to resume. Exit codes: 0 every line imported (or imported before), 1 some lines refused
                    or failed (see the failed-lines file) or the run could not start, 2 usage,
                    78 a secrets-key problem, 130 interrupted.
                    """,
                arguments: [Argument(name: "FILE", help: "the export: appUserId<TAB>base64 receipt per line")],
                options: [
                    Option(name: "--app", valueName: "ID", help: "the app the receipts belong to", isRequired: true),
                    Option(
                        name: "--failed-out", valueName: "FILE",
                        help: "where the refused and failed lines go (default: FILE.failed)"),
                    Option(
                        name: "--environment", valueName: "ENV",
                        help: "where to ask Apple (default: each receipt's own)", choices: ["Production", "Sandbox"]),
                    Option(
                        name: "--rate-percent", valueName: "N",
                        help:
                            "share of Apple's per-app rate limits to use, 1-100 (leave the rest to the servers);"
                            + " up to 100000 for an App Store that is not Apple's (a simulator with lifted limits)",
                        defaultValue: "50"),
                    Option(name: "--jobs", valueName: "N", help: "lines imported at a time, 1-64", defaultValue: "8"),
                ] + SecretsCommands.databaseOptions,
                action: { try await run($0) })
        ])

    static let interruptedExitCode: Int32 = 130

    private static func run(_ parsed: CommandLineArguments) async throws -> Int32 {
        let path = parsed.positional[0]
        let appId = try parsed.require("--app")
        guard let ratePercent = Int(parsed.value("--rate-percent") ?? "50"), (1...100_000).contains(ratePercent) else {
            throw UsageError("--rate-percent must be a number from 1 to 100 (up to 100000 for a simulator)")
        }
        guard let jobs = Int(parsed.value("--jobs") ?? "8"), (1...64).contains(jobs) else {
            throw UsageError("--jobs must be a number from 1 to 64")
        }
        let environment = parsed.value("--environment").flatMap(AppStoreEnvironment.init(rawValue:))
        let failedPath = parsed.value("--failed-out") ?? path + ".failed"
        var overrides: [String: String] = [:]
        if let database = parsed.value("--database") { overrides["databaseURL"] = database }
        let configuration: ServerConfiguration
        let secrets: StoredSecrets
        do {
            configuration = try ServerConfiguration.load(file: parsed.value("--config"), overrides: overrides)
            secrets = try configuration.storedSecrets()
        } catch let error as SecretsError {
            return fail("error: \(error)", code: SecretsCommands.keyProblemExitCode)
        } catch {
            return fail("error: \(error)", code: 2)
        }
        let total: Int
        do {
            total = try BoundedLineReader.countLines(path: path)
        } catch {
            return fail("error: cannot read \(path): \(error.localizedDescription)", code: 1)
        }
        let store: any Store
        do {
            store = try await StoreLocation(configuration.resolvedDatabaseURL).open(migrate: false)
        } catch {
            return fail("error: \(error)", code: 1)
        }
        let ingestion = Ingestion(
            store: store, secrets: secrets, rateLimiters: AppStoreRateLimiters(share: Double(ratePercent) / 100))
        let code: Int32
        do {
            let app = try await ingestion.apps.runtime(appId: appId)
            // Apple's limits are Apple's: only an App Store of one's own (the simulator, with its
            // limits lifted to match) may be asked faster.
            if ratePercent > 100, app.settings.appStoreConnect.map({ Self.isApple($0.baseURL) }) ?? true {
                await store.close()
                return fail(
                    "error: --rate-percent above 100 exceeds Apple's limits; it is only for an App Store that is not"
                        + " Apple's (an appStoreConnect baseURL such as the simulator's)", code: 2)
            }
            let run = Run(
                backfill: ReceiptBackfill(ingestion: ingestion, appId: appId, environment: environment), store: store,
                path: path, failedPath: failedPath, jobs: jobs, total: total)
            code = try await run.start()
        } catch {
            await store.close()
            return fail("error: \(error)", code: 1)
        }
        await store.close()
        return code
    }

    /// One run over the file.
    private struct Run {
        let backfill: ReceiptBackfill
        let store: any Store
        let path: String
        let failedPath: String
        let jobs: Int
        let total: Int

        func start() async throws -> Int32 {
            var reader = try BoundedLineReader(path: path, maximumBytes: ReceiptBackfill.maximumLineBytes)
            defer { reader.close() }
            guard FileManager.default.createFile(atPath: failedPath, contents: nil),
                let failedFile = FileHandle(forWritingAtPath: failedPath)
            else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: failedPath]) }
            defer { try? failedFile.close() }
            let progress = ProgressReporter(label: "backfill", total: total)
            let interrupt = InterruptRequest()
            defer { interrupt.cancel() }
            var summary = BackfillSummary()
            var lastLine = 0
            // Lines in flight, oldest first: results are taken in file order.
            var window: [(number: Int, raw: [UInt8]?, task: Task<ReceiptBackfill.Outcome, Never>)] = []
            func settle(_ entry: (number: Int, raw: [UInt8]?, task: Task<ReceiptBackfill.Outcome, Never>)) async {
                let outcome = await entry.task.value
                summary.count(outcome)
                lastLine = entry.number
                switch outcome {
                case .imported, .duplicate: break
                case .refused(let rule, let message), .failed(let rule, let message):
                    var text = "# line \(entry.number): \(rule): \(message)\n"
                    if let raw = entry.raw { text += String(decoding: raw, as: UTF8.self) + "\n" }
                    failedFile.write(Data(text.utf8))
                }
                progress.advance()
            }
            var number = 0
            while !interrupt.isRequested, let next = try reader.next() {
                number += 1
                let entry: (number: Int, raw: [UInt8]?, task: Task<ReceiptBackfill.Outcome, Never>)
                switch next {
                case .tooLong:
                    let refusal = ReceiptBackfill.Refusal.tooLong
                    entry = (number, nil, Task { .refused(rule: refusal.rule, message: refusal.message) })
                case .line(let bytes):
                    if bytes.isEmpty || bytes == [UInt8(ascii: "\r")] || bytes.first == UInt8(ascii: "#") {
                        progress.advance()
                        continue
                    }
                    switch ReceiptBackfill.parse(bytes) {
                    case .failure(let refusal):
                        entry = (number, bytes, Task { .refused(rule: refusal.rule, message: refusal.message) })
                    case .success(let line):
                        let backfill = backfill
                        entry = (number, bytes, Task { await backfill.importLine(line) })
                    }
                }
                window.append(entry)
                if window.count >= jobs { await settle(window.removeFirst()) }
            }
            while !window.isEmpty { await settle(window.removeFirst()) }
            let interrupted = interrupt.isRequested
            progress.finish(interrupted: interrupted)
            print(summary.text)
            if summary.unsuccessful > 0 {
                print("failed lines: \(failedPath)")
            } else {
                try? failedFile.close()
                try? FileManager.default.removeItem(atPath: failedPath)
            }
            // A bulk load leaves the planner's statistics behind the tables (PostgreSQL); the
            // servers' prepared plans are made again from fresh ones. The import is committed
            // whatever happens here: a failure is a warning, not the run's outcome. An
            // interrupted run leaves it to the run that resumes, which counts the lines imported
            // before as duplicates.
            if summary.imported + summary.duplicates > 0, store.engine == .postgres, !interrupted {
                do {
                    try await store.write { try $0.refreshPlannerStatistics() }
                } catch {
                    FileHandle.standardError.write(
                        Data("warning: could not refresh the planner's statistics (\(error)); run ANALYZE\n".utf8))
                }
            }
            if interrupted {
                FileHandle.standardError.write(
                    Data(
                        """
                        interrupted after line \(lastLine) of \(total): the lines in progress were finished.
                        To resume, run the same command again: imported lines are skipped.

                        """.utf8))
                return BackfillCommand.interruptedExitCode
            }
            return summary.unsuccessful > 0 ? 1 : 0
        }
    }

    /// Whether an App Store Connect base URL is Apple's (`nil`: Apple's by default).
    static func isApple(_ baseURL: String?) -> Bool {
        guard let baseURL else { return true }
        guard let host = URL(string: baseURL)?.host?.lowercased() else { return true }
        return host == "apple.com" || host.hasSuffix(".apple.com")
    }

    private static func fail(_ message: String, code: Int32) -> Int32 {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        return code
    }
}
