import AppStoreModels
import Foundation
import SecretSealing
import Storage
import StorekeeperIngestion
import StorekeeperServer

/// `storekeeper secrets new-key | status | rotate`: the key that seals the secrets stored in the
/// database (an app's shared secret and App Store Connect key, webhook signing secrets).
///
/// Exit codes: 0 done, 1 storage or file error, 2 usage, 78 a key problem (no key where one is
/// needed, a key that does not open what the database holds, an unusable key file): the same
/// code `storekeeper serve` exits with when it cannot use its key.
enum SecretsCommands {
    static let databaseOptions = [
        Option(name: "--config", valueName: "FILE", help: "the server's configuration file (JSON)"),
        Option(
            name: "--database", valueName: "URL",
            help: "the database (default: the configuration's, or STOREKEEPER_DATABASE_URL)"),
    ]

    static let command: Command = Command(
        name: "secrets", summary: "the key sealing stored secrets (docs/server.md)",
        discussion: """
            Exit codes: 0 done, 1 storage or file error, 2 usage, 78 a key problem (the code
            storekeeper serve exits with when it cannot use its key).
            """,
        subcommands: [
            Command(
                name: "new-key", summary: "write a new random key (base64, mode 0600) to FILE, which must not exist",
                arguments: [Argument(name: "FILE", help: "the key file to create")],
                action: { newKey($0) }),
            Command(
                name: "status", summary: "count the stored secrets in clear and sealed under each key id",
                options: databaseOptions, action: { await status($0) }),
            Command(
                name: "rotate", summary: "seal every stored secret under a new key, in one transaction",
                discussion: """
                    The old key is the configured one (STOREKEEPER_SECRETS_KEY[_FILE]) and/or --old-key-file.
                    The new key may come from STOREKEEPER_SECRETS_NEW_KEY instead of --new-key-file.
                    """,
                options: [
                    Option(name: "--new-key-file", valueName: "FILE", help: "the new key"),
                    Option(name: "--old-key-file", valueName: "FILE", help: "an old key", isRepeatable: true),
                ] + databaseOptions,
                action: { try await rotate($0) }),
        ])

    /// sysexits' EX_CONFIG: the key configuration is wrong, a restart will not help.
    static let keyProblemExitCode: Int32 = 78

    private static func newKey(_ parsed: CommandLineArguments) -> Int32 {
        let path = parsed.positional[0]
        do {
            let key = try SecretsKeyFile.create(path)
            print("wrote a new secrets key to \(path) (key \(key.id), mode 600)")
            return 0
        } catch {
            return fail("error: \(error)", code: 1)
        }
    }

    private static func status(_ parsed: CommandLineArguments) async -> Int32 {
        let configuration: ServerConfiguration
        let key: SecretsKey?
        do {
            configuration = try loadConfiguration(parsed)
            key = try configuration.loadSecretsKey()
        } catch let error as SecretsError {
            return fail("error: \(error)", code: keyProblemExitCode)
        } catch {
            return fail("error: \(error)", code: 2)
        }
        let result = await outcome { () async throws -> StoredSecretsInventory in
            let store = try await StoreLocation(configuration.resolvedDatabaseURL).open(migrate: false)
            do {
                let inventory = try await store.read { reader in try StoredSecretsInventory(reading: reader) }
                await store.close()
                return inventory
            } catch {
                await store.close()
                throw error
            }
        }
        switch result {
        case .success(let inventory):
            print("configured key: \(key?.id ?? "none")")
            print("in clear: \(inventory.clear.count)")
            for keyId in inventory.sealed.keys.sorted() {
                print("sealed under key \(keyId): \(inventory.sealed[keyId]!.count)")
            }
            if !inventory.malformed.isEmpty {
                print("malformed: \(inventory.malformed.map(\.description).joined(separator: ", "))")
            }
            return 0
        case .failure(let error):
            return fail("error: \(error)", code: 1)
        }
    }

    private static func rotate(_ parsed: CommandLineArguments) async throws(UsageError) -> Int32 {
        let environmentKey = ProcessInfo.processInfo.environment["STOREKEEPER_SECRETS_NEW_KEY"].flatMap {
            $0.isEmpty ? nil : $0
        }
        let newKeyFile = parsed.value("--new-key-file")
        guard (newKeyFile == nil) != (environmentKey == nil) else {
            throw UsageError("give the new key with --new-key-file or STOREKEEPER_SECRETS_NEW_KEY (one of them)")
        }
        let configuration: ServerConfiguration
        let sealer: SecretSealer
        do {
            configuration = try loadConfiguration(parsed)
            let newKey =
                try newKeyFile.map(SecretsKeyFile.read)
                ?? SecretsKey(encoded: environmentKey!, source: "STOREKEEPER_SECRETS_NEW_KEY")
            var oldKeys = try parsed.values("--old-key-file").map(SecretsKeyFile.read)
            if let configured = try configuration.loadSecretsKey() { oldKeys.append(configured) }
            sealer = SecretSealer(key: newKey, alsoOpening: oldKeys)
        } catch let error as SecretsError {
            return fail("error: \(error)", code: keyProblemExitCode)
        } catch {
            return fail("error: \(error)", code: 2)
        }
        let secrets = StoredSecrets(sealer: sealer)
        let result = await outcome { () async throws -> (Int, StoredSecretsInventory) in
            let store = try await StoreLocation(configuration.resolvedDatabaseURL).open(migrate: false)
            do {
                let count = try await secrets.resealAll(store, at: Timestamp(Date()))
                let inventory = try await store.read { reader in try StoredSecretsInventory(reading: reader) }
                await store.close()
                return (count, inventory)
            } catch {
                await store.close()
                throw error
            }
        }
        switch result {
        case .success(let (count, inventory)):
            let keyId = sealer.key.id
            print(
                "sealed \(count) secrets under key \(keyId); \(inventory.sealed[keyId]?.count ?? 0) stored secrets are under it"
            )
            if !inventory.malformed.isEmpty {
                print("left as they are (malformed): \(inventory.malformed.map(\.description).joined(separator: ", "))")
            }
            print("next: configure the new key for every server (STOREKEEPER_SECRETS_KEY_FILE) and restart them")
            return 0
        case .failure(let error as SecretsError):
            return fail("error: \(error)", code: keyProblemExitCode)
        case .failure(let error):
            return fail("error: \(error)", code: 1)
        }
    }

    private static func loadConfiguration(_ parsed: CommandLineArguments) throws -> ServerConfiguration {
        var overrides: [String: String] = [:]
        if let database = parsed.value("--database") { overrides["databaseURL"] = database }
        return try ServerConfiguration.load(file: parsed.value("--config"), overrides: overrides)
    }

    /// The work's result, so each caller maps its own errors to exit codes.
    private static func outcome<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
        do {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }

    private static func fail(_ message: String, code: Int32) -> Int32 {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        return code
    }
}
