import AppStoreModels
import Foundation
import HTTPServer
import SecretSealing
import Storage
import StorekeeperIngestion
import StorekeeperServer
import Synchronization

/// `storekeeper serve`: opens (and migrates) the database, serves the API, runs the workers the
/// configuration turns on (`StorekeeperApplication.startWorkers`: webhook delivery, jobs, the
/// access scheduler, history replay, status polling), logs `server.listening` with the URL and
/// version, and on SIGTERM or SIGINT stops accepting, finishes in-flight requests, stops the
/// workers, closes the database and exits 0. With `--demo` (`make run`), the same server runs
/// with the embedded App Store simulator and simulated customers: see `DemoCommand`.
///
/// Before listening it checks the stored secrets against the configured secrets key
/// (`StoredSecrets.prepare`): sealed secrets and no key, or secrets sealed under another key,
/// end it with exit code 78 and one line naming the problem; clear secrets are sealed when a
/// key is configured, and only counted in a warning when none is.
enum ServeCommand {
    static let command: Command = Command(
        name: "serve", summary: "serve the HTTP API (docs/server.md)",
        discussion: """
            Settings come from --config (JSON), then STOREKEEPER_… variables, then these options.
            With --demo (make run) the server runs with the embedded App Store simulator and simulated
            customers on its own SQLite file. Exit codes: 0 stopped by SIGTERM/SIGINT, 1 failed,
            2 usage or configuration, 78 a secrets-key problem.
            """,
        options: [
            Option(name: "--config", valueName: "FILE", help: "the configuration file (JSON)"),
            Option(name: "--database", valueName: "URL", help: "a SQLite path, sqlite:PATH or postgres://…"),
            Option(name: "--listen", valueName: "HOST:PORT", help: "where to listen"),
            Option(
                name: "--month-seconds", valueName: "N",
                help: "with --demo: seconds of wall time per simulated month (default: 120)"),
        ],
        flags: [Flag(name: "--demo", help: "run with the embedded simulator and simulated customers")],
        action: { try await run($0) })

    static func run(_ parsed: CommandLineArguments) async throws(UsageError) -> Int32 {
        var demo: DemoCommand.Options?
        if parsed.has("--demo") {
            var options = DemoCommand.Options()
            if let text = parsed.value("--month-seconds") {
                guard let seconds = Double(text), seconds >= 10, seconds <= 86_400 * 31 else {
                    throw UsageError("--month-seconds must be a number from 10")
                }
                options.monthSeconds = seconds
            }
            // The demo's database mirrors the simulator's store, which lives in memory only.
            guard parsed.value("--database") == nil else {
                throw UsageError("--demo keeps its own SQLite file (<data>/demo.sqlite); --database does not apply")
            }
            demo = options
        } else if parsed.value("--month-seconds") != nil {
            throw UsageError("--month-seconds applies to --demo only")
        }
        var overrides: [String: String] = [:]
        if let database = parsed.value("--database") { overrides["databaseURL"] = database }
        if let listen = parsed.value("--listen") { overrides["listen"] = listen }
        let configuration: ServerConfiguration
        do {
            configuration = try ServerConfiguration.load(file: parsed.value("--config"), overrides: overrides)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            return 2
        }
        if let demo { return await DemoCommand.run(configuration, options: demo) }
        return await serve(configuration)
    }

    private static func serve(_ configuration: ServerConfiguration) async -> Int32 {
        if configuration.databaseURL == nil {
            try? FileManager.default.createDirectory(
                atPath: configuration.dataDirectory, withIntermediateDirectories: true)
        }
        let secrets: StoredSecrets
        do {
            secrets = try configuration.storedSecrets()
        } catch {
            return secretsUnavailable(error)
        }
        let store: any Store
        do {
            // Each migration applied is logged: one that rebuilds a large database's tables (0025)
            // runs for minutes before the server listens.
            store = try await StoreLocation(configuration.resolvedDatabaseURL).open(
                migrate: true, observer: migrationLog(), statementProfile: configuration.sqliteStatementProfile)
        } catch {
            log(["event": "server.databaseFailed", "error": "\(error)"])
            return 1
        }
        do {
            report(try await secrets.prepare(store, at: Timestamp(Date())), secrets: secrets)
        } catch let error as SecretsError {
            await store.close()
            return secretsUnavailable(error)
        } catch {
            log(["event": "server.databaseFailed", "error": "\(error)"])
            await store.close()
            return 1
        }
        let application = StorekeeperApplication(configuration: configuration, store: store, secrets: secrets)
        let server: HTTPServer
        do {
            server = try application.startServer()
        } catch {
            log(["event": "server.startFailed", "error": "\(error)"])
            await store.close()
            return 1
        }
        log([
            "event": "server.listening", "url": server.baseURL.absoluteString, "database": store.engine.rawValue,
            "version": StorekeeperVersion.current,
        ])
        let workers = application.startWorkers()
        await server.runUntilShutdownSignal()
        await workers.stop()
        await store.close()
        log(["event": "server.stopped"])
        return 0
    }

    /// Exit code 78 with one line: which key problem, and what to do.
    private static func secretsUnavailable(_ error: SecretsError) -> Int32 {
        var fields = ["event": "server.secretsUnavailable", "code": error.code.rawValue, "error": error.message]
        switch error.code {
        case .keyMissing: fields["hint"] = ServerConfiguration.secretsKeyHint
        case .unknownKey:
            fields["hint"] =
                "configure the key these secrets were sealed with, or rotate them: storekeeper secrets rotate"
        default: break
        }
        log(fields)
        return SecretsCommands.keyProblemExitCode
    }

    /// What the startup check did, without values.
    private static func report(_ preparation: StoredSecrets.Preparation, secrets: StoredSecrets) {
        if preparation.sealedNow > 0, let keyId = secrets.sealer?.key.id {
            log(["event": "secrets.sealed", "count": String(preparation.sealedNow), "keyId": keyId])
        }
        if preparation.clearWithoutKey > 0 {
            log([
                "event": "secrets.clearWithoutKey", "count": String(preparation.clearWithoutKey),
                "hint": ServerConfiguration.secretsKeyHint,
            ])
        }
        if !preparation.unreadable.isEmpty {
            log([
                "event": "secrets.unreadable",
                "fields": preparation.unreadable.map(\.description).joined(separator: ", "),
            ])
        }
    }

    /// One JSON line on standard error: a constant event name, data in keys.
    static func log(_ fields: [String: String]) { ServerLog.event(fields) }

    /// `server.migrating` when a migration starts (its place among the pending ones) and
    /// `server.migrated` with the milliseconds it took; nothing while a new database's schema is
    /// made (every migration pending, each done at once: a first start, the demo's among them).
    static func migrationLog() -> MigrationObserver {
        let started = Mutex(ContinuousClock.now)
        let everything = Migration.all.count
        return MigrationObserver(
            starting: { identifier, index, pending in
                guard pending < everything else { return }
                started.withLock { $0 = ContinuousClock.now }
                log([
                    "event": "server.migrating", "migration": identifier, "index": "\(index)", "pending": "\(pending)",
                ])
            },
            applied: { identifier, _, pending in
                guard pending < everything else { return }
                let elapsed = ContinuousClock.now - started.withLock { $0 }
                let milliseconds =
                    elapsed.components.seconds * 1_000 + elapsed.components.attoseconds / 1_000_000_000_000_000
                log(["event": "server.migrated", "migration": identifier, "milliseconds": "\(milliseconds)"])
            })
    }
}
