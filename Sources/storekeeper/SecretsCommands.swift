import AppStoreModels
import Dispatch
import Foundation
import SecretSealing
import Storage
import StorekeeperIngestion
import StorekeeperServer
import Synchronization

/// `storekeeper secrets new-key | status | rotate`: the key that seals the secrets stored in the
/// database (an app's shared secret and App Store Connect key, webhook signing secrets).
///
/// Exit codes: 0 done, 1 storage or file error, 2 usage, 78 a key problem (no key where one is
/// needed, a key that does not open what the database holds, an unusable key file): the same
/// code `storekeeper serve` exits with when it cannot use its key.
enum SecretsCommands {
    static let usage = """
        usage: storekeeper secrets new-key FILE
               storekeeper secrets status [--config FILE] [--database URL]
               storekeeper secrets rotate --new-key-file FILE [--old-key-file FILE]... [--config FILE] [--database URL]
          new-key  writes a new random key (base64, mode 0600) to FILE, which must not exist
          status   counts the stored secrets in clear and sealed under each key id
          rotate   seals every stored secret under the new key in one transaction; the old key is the
                   configured one (STOREKEEPER_SECRETS_KEY[_FILE]) and/or --old-key-file. The new key may
                   come from STOREKEEPER_SECRETS_NEW_KEY instead of --new-key-file.
          The database comes from --database or the server's configuration (--config, STOREKEEPER_DATABASE_URL).
        """

    /// sysexits' EX_CONFIG: the key configuration is wrong, a restart will not help.
    static let keyProblemExitCode: Int32 = 78

    static func run(_ arguments: [String]) -> Int32 {
        guard let subcommand = arguments.first else { return fail(usage, code: 2) }
        let parsed: CommandLineArguments
        do {
            parsed = try CommandLineArguments(arguments.dropFirst(), switches: ["--help"])
        } catch {
            return fail("\(error.message)\n\(usage)", code: 2)
        }
        if parsed.has("--help") || subcommand == "--help" {
            print(usage)
            return 0
        }
        switch subcommand {
        case "new-key": return newKey(parsed)
        case "status": return status(parsed)
        case "rotate": return rotate(parsed)
        default: return fail("unknown secrets command \(subcommand)\n\(usage)", code: 2)
        }
    }

    private static func newKey(_ parsed: CommandLineArguments) -> Int32 {
        guard parsed.options.isEmpty, parsed.positional.count == 1 else { return fail(usage, code: 2) }
        let path = parsed.positional[0]
        do {
            let key = try SecretsKeyFile.create(path)
            print("wrote a new secrets key to \(path) (key \(key.id), mode 600)")
            return 0
        } catch {
            return fail("error: \(error)", code: 1)
        }
    }

    private static func status(_ parsed: CommandLineArguments) -> Int32 {
        do {
            try parsed.allowOnly(["--config", "--database"])
        } catch {
            return fail("\(error.message)\n\(usage)", code: 2)
        }
        guard parsed.positional.isEmpty else { return fail(usage, code: 2) }
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
        let result = blocking { () async throws -> StoredSecretsInventory in
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

    private static func rotate(_ parsed: CommandLineArguments) -> Int32 {
        do {
            try parsed.allowOnly(["--config", "--database", "--new-key-file", "--old-key-file"])
        } catch {
            return fail("\(error.message)\n\(usage)", code: 2)
        }
        guard parsed.positional.isEmpty else { return fail(usage, code: 2) }
        let environmentKey = ProcessInfo.processInfo.environment["STOREKEEPER_SECRETS_NEW_KEY"].flatMap {
            $0.isEmpty ? nil : $0
        }
        let newKeyFile = parsed.value("--new-key-file")
        guard (newKeyFile == nil) != (environmentKey == nil) else {
            return fail(
                "give the new key with --new-key-file or STOREKEEPER_SECRETS_NEW_KEY (one of them)\n\(usage)", code: 2)
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
        let result = blocking { () async throws -> (Int, StoredSecretsInventory) in
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

    /// Runs async work to completion from the CLI's main thread.
    private static func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> Result<T, any Error>
    {
        let outcome = Mutex<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let result: Result<T, any Error>
            do {
                result = .success(try await body())
            } catch {
                result = .failure(error)
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return outcome.withLock { $0! }
    }

    private static func fail(_ message: String, code: Int32) -> Int32 {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        return code
    }
}
