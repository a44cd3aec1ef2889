import AppStoreModels
import Foundation
import Storage
import StorekeeperIngestion
import StorekeeperServer
import Synchronization

/// `storekeeper analytics rebuild --app ID`: recomputes an app's analytics aggregates from its
/// stored facts (docs/analytics.md) and says whether they changed, while servers keep ingesting.
///
/// Progress goes to standard error (`ProgressReporter`). Ctrl-C stops after the batch in
/// progress: every customer done is consistent with its facts, and running the command again
/// completes the rebuild (it recomputes every customer; those done are found unchanged).
///
/// Exit codes: 0 done (changed or not), 1 storage error or unknown app, 2 usage, 130 interrupted.
enum AnalyticsCommands {
    static let command: Command = Command(
        name: "analytics", summary: "the analytics aggregates (docs/analytics.md)",
        subcommands: [
            Command(
                name: "rebuild",
                summary: "recompute an app's aggregates from its stored facts and say whether they changed",
                discussion: """
                    Customers are recomputed 100 per transaction, each locked as ingestion locks it, so a
                    running server keeps ingesting; a last short step sets the daily rows to the sum of the
                    customers' contributions. Progress on standard error; prints "unchanged" or "changed"
                    with row counts. Ctrl-C stops after the batch in progress; run the command again to
                    complete it. Exit codes: 0 done, 1 storage error or unknown app, 2 usage, 130 interrupted.
                    """,
                options: [
                    Option(name: "--app", valueName: "ID", help: "the app", isRequired: true),
                    Option(name: "--config", valueName: "FILE", help: "the server's configuration file (JSON)"),
                    Option(
                        name: "--database", valueName: "URL",
                        help: "the database (default: the configuration's, or STOREKEEPER_DATABASE_URL)"),
                ],
                action: { try await rebuild($0) })
        ])

    static let interruptedExitCode: Int32 = 130

    static func rebuild(_ parsed: CommandLineArguments) async throws -> Int32 {
        let appId = try parsed.require("--app")
        var overrides: [String: String] = [:]
        if let database = parsed.value("--database") { overrides["databaseURL"] = database }
        let configuration = try ServerConfiguration.load(file: parsed.value("--config"), overrides: overrides)
        let store = try await StoreLocation(configuration.resolvedDatabaseURL).open(migrate: false)
        do {
            guard try await store.read({ reader in try reader.app(id: appId) }) != nil else {
                await store.close()
                FileHandle.standardError.write(Data("error: no app \(appId)\n".utf8))
                return 1
            }
            let interrupt = InterruptRequest()
            defer { interrupt.cancel() }
            let progress = RebuildProgress()
            let result = try await AnalyticsAggregation.rebuild(
                appId: appId, store: store, now: Timestamp(Date()),
                progress: { done, total in progress.batchDone(done: done, total: total) },
                shouldStop: { interrupt.isRequested })
            progress.finish(interrupted: result.stopped)
            await store.close()
            if result.stopped {
                print("stopped: \(result.customers) customers recomputed, \(result.contributionsChanged) changed")
                FileHandle.standardError.write(
                    Data(
                        """
                        interrupted after \(result.customers) customers: the aggregates are consistent for every \
                        customer recomputed.
                        To complete the rebuild, run the same command again.

                        """.utf8))
                return interruptedExitCode
            }
            print(
                "\(result.changed ? "changed" : "unchanged"): \(result.customers) customers, "
                    + "\(result.rowsBefore) daily rows before, \(result.rowsAfter) after")
            return 0
        } catch {
            await store.close()
            throw error
        }
    }

    /// The rebuild's progress in customers, built when the rebuild starts (and knows the total).
    /// - Note: Thread-safe: the reporter sits behind a `Mutex`.
    private final class RebuildProgress: Sendable {
        private let state = Mutex<(reporter: ProgressReporter?, done: Int)>((nil, 0))

        func batchDone(done: Int, total: Int) {
            state.withLock {
                if $0.reporter == nil { $0.reporter = ProgressReporter(label: "rebuild", total: total) }
                $0.reporter?.advance(by: done - $0.done)
                $0.done = done
            }
        }

        func finish(interrupted: Bool) {
            state.withLock { $0.reporter?.finish(interrupted: interrupted) }
        }
    }
}
