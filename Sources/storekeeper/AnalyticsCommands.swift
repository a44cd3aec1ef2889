import AppStoreModels
import Entitlements
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
                action: { try await rebuild($0) }),
            Command(
                name: "rates", summary: "the exchange rates to the reporting currency",
                subcommands: [
                    Command(
                        name: "import",
                        summary: "add an app's exchange rates from a CSV file (date,currency,rate)",
                        discussion: """
                            Each line `date,currency,rate` (an optional header `date,currency,rate`) says what one
                            unit of `currency` is worth in the app's reporting currency from `date` until the
                            currency's next rate (at most 6 decimals). Every line is checked before anything is
                            saved; a rate for a currency and day already stored is replaced, the others are kept.
                            Answers convert with the new rates at once (nothing is recomputed). The app needs a
                            reporting currency (admin API analytics-settings). Exit codes: 0 imported, 1 storage
                            error, unknown app, no reporting currency or a bad line, 2 usage.
                            """,
                        arguments: [Argument(name: "FILE", help: "the CSV file")],
                        options: [
                            Option(name: "--app", valueName: "ID", help: "the app", isRequired: true),
                            Option(name: "--config", valueName: "FILE", help: "the server's configuration file (JSON)"),
                            Option(
                                name: "--database", valueName: "URL",
                                help: "the database (default: the configuration's, or STOREKEEPER_DATABASE_URL)"),
                        ],
                        action: { try await importRates($0) })
                ]),
        ])

    static func importRates(_ parsed: CommandLineArguments) async throws -> Int32 {
        let appId = try parsed.require("--app")
        guard let path = parsed.positional.first else { throw UsageError("missing FILE") }
        var overrides: [String: String] = [:]
        if let database = parsed.value("--database") { overrides["databaseURL"] = database }
        let configuration = try ServerConfiguration.load(file: parsed.value("--config"), overrides: overrides)
        let store = try await StoreLocation(configuration.resolvedDatabaseURL).open(migrate: false)
        func fail(_ message: String) async -> Int32 {
            await store.close()
            FileHandle.standardError.write(Data("error: \(message)\n".utf8))
            return 1
        }
        do {
            let stored = try await store.read { reader in
                (try reader.app(id: appId), try reader.analyticsSettings(appId: appId))
            }
            guard stored.0 != nil else { return await fail("no app \(appId)") }
            guard let reportingCurrency = stored.1?.settings.reportingCurrency else {
                return await fail("app \(appId) has no reporting currency: set it first (analytics-settings)")
            }
            let file: ExchangeRateFile
            do {
                file = try ExchangeRateFile(path: path, reportingCurrency: reportingCurrency)
            } catch let failure as ExchangeRateFile.Failure {
                return await fail("\(path): \(failure.description); nothing imported")
            } catch {
                return await fail("\(path): cannot be read; nothing imported")
            }
            let now = Timestamp(Date())
            let imported = file.rates
            let outcome = try await store.write { transaction -> (version: Int64, replaced: Int, refused: String?) in
                guard try transaction.lockApp(id: appId) != nil else { return (0, 0, "no app \(appId)") }
                var settings = try transaction.analyticsSettings(appId: appId)?.settings ?? AnalyticsSettings()
                guard settings.reportingCurrency == reportingCurrency else {
                    return (0, 0, "the reporting currency changed meanwhile; run the import again")
                }
                let merged = ExchangeRateFile(rates: imported).merged(into: settings.exchangeRates)
                settings.exchangeRates = merged.rates
                if let failure = settings.validationFailure { return (0, 0, failure) }
                let version = try transaction.saveAnalyticsSettings(appId: appId, settings, at: now)
                try transaction.appendAudit(
                    NewAuditEntry(
                        at: now, actor: "cli", action: "analytics.rates.import", appId: appId,
                        detail: .object(["version": .integer(version), "rates": .integer(Int64(imported.count))])))
                return (version, merged.replaced, nil)
            }
            if let refused = outcome.refused { return await fail(refused + "; nothing imported") }
            await store.close()
            let currencies = Set(imported.map(\.currency)).sorted()
            print(
                "imported \(imported.count) rates to \(reportingCurrency) (\(imported.count - outcome.replaced) new, "
                    + "\(outcome.replaced) replaced) for \(currencies.isEmpty ? "no currency" : currencies.joined(separator: ", ")); "
                    + "settings version \(outcome.version)")
            return 0
        } catch {
            await store.close()
            throw error
        }
    }

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
