import AppStoreModels
import Foundation
import Storage
import StorekeeperIngestion
import StorekeeperServer

/// `storekeeper analytics rebuild --app ID`: recomputes an app's analytics aggregates from its
/// stored facts (docs/analytics.md) and says whether they changed.
///
/// Exit codes: 0 done (changed or not), 1 storage error or unknown app, 2 usage.
enum AnalyticsCommands {
    static let command: Command = Command(
        name: "analytics", summary: "the analytics aggregates (docs/analytics.md)",
        subcommands: [
            Command(
                name: "rebuild",
                summary: "recompute an app's aggregates from its stored facts and say whether they changed",
                discussion: """
                    Runs in one transaction: the app's customers are locked, the aggregates cleared and
                    recomputed; a server may keep running. Prints "unchanged" or "changed" with row counts.
                    Exit codes: 0 done, 1 storage error or unknown app, 2 usage.
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
            let result = try await AnalyticsAggregation.rebuild(
                appId: appId, store: store, now: Timestamp(Date()))
            await store.close()
            print(
                "\(result.changed ? "changed" : "unchanged"): \(result.customers) customers, "
                    + "\(result.rowsBefore) daily rows before, \(result.rowsAfter) after")
            return 0
        } catch {
            await store.close()
            throw error
        }
    }
}
