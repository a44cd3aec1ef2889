import AppStoreModels
import AppStoreTrust
import Dispatch
import Entitlements
import Foundation
import Storage
import StorekeeperIngestion
import StorekeeperTesting
import Synchronization

/// The child process of the group-commit crash test (`StorekeeperTestProbes group-commit`):
/// ingests signed V2 notifications through `Ingestion` from many concurrent tasks, so the
/// `IngestionWriter` commits several at once, and prints each one only after its `ingest`
/// call returned. A parent that kills it with SIGKILL at any instant knows which
/// notifications were acknowledged and must be stored, once.
///
///     StorekeeperTestProbes group-commit --setup --database URL --app ID --ca DIR
///     StorekeeperTestProbes group-commit --database URL --app ID --ca DIR --round R
///                                        [--tasks N] [--replay UUID,UUID,…] [--count N]
///                                        [--retry-seconds S]
///
/// `--setup` creates the test CA in `DIR`, the app trusting its root, the catalog, and one
/// customer per task with an app account token. A round then ingests notifications
/// `uuid(round, 0)`, `uuid(round, 1)`, … (task `t` takes every `tasks`-th one and signs it with
/// customer `t`'s token, so no two batches in flight lock the same customer), after first
/// sending the `--replay` notifications again, one by one. With `--retry-seconds S` an ingest
/// that fails retryably (the database went away) is sent again every 50 ms for up to `S`
/// seconds, as Apple resends after a 503: the probe keeps going through a database restart.
///
/// stdout, one line per acknowledged notification: `ack UUID OUTCOME`. stderr: `ready` once the
/// store is open and the app loaded, `stats batches=B groups=G largest=L` every 20 ms
/// (`IngestionWriter.statistics`), `retry UUID CODE` for each retryable failure that is sent
/// again, and `error UUID CODE` for an ingest that threw and is not sent again.
/// - Note: Runs on the calling thread, which it blocks; not for use inside async code.
public enum GroupCommitCrashProbe {
    struct Options {
        var setup = false
        var database = ""
        var appId = ""
        var ca = ""
        var round = -1
        var tasks = 16
        var replay: [String] = []
        var count = Int.max
        var retrySeconds = 0
    }

    static let usage = """
        usage: StorekeeperTestProbes group-commit [--setup] --database URL --app ID --ca DIR [--round R]
                                                  [--tasks N] [--replay UUID,UUID,…] [--count N]
                                                  [--retry-seconds S]
        """
    static let bundleId = "com.example"
    static let productId = "com.example.monthly"
    static let setupTime = Timestamp(millisecondsSince1970: 1_764_547_200_000)

    public static func run(_ arguments: [String]) -> Int32 {
        var options = Options()
        var index = 0
        while index < arguments.count {
            let value = index + 1 < arguments.count ? arguments[index + 1] : ""
            switch arguments[index] {
            case "--setup":
                options.setup = true
                index -= 1
            case "--database": options.database = value
            case "--app": options.appId = value
            case "--ca": options.ca = value
            case "--round": options.round = Int(value) ?? -1
            case "--tasks": options.tasks = Int(value) ?? -1
            case "--replay": options.replay = value.split(separator: ",").map(String.init)
            case "--count": options.count = Int(value) ?? -1
            case "--retry-seconds": options.retrySeconds = Int(value) ?? -1
            default: options.tasks = -1
            }
            index += 2
        }
        guard !options.database.isEmpty, !options.appId.isEmpty, !options.ca.isEmpty, options.tasks > 0,
            options.count >= 0, options.retrySeconds >= 0, options.setup || options.round >= 0,
            options.replay.allSatisfy({ key(ofUUID: $0) != nil })
        else {
            FileHandle.standardError.write(Data((usage + "\n").utf8))
            return 2
        }
        let outcome = ProbeTask.wait { [options] in
            if options.setup { try await setUp(options) } else { try await ingest(options) }
        }
        switch outcome {
        case .success:
            return 0
        case .failure(let error):
            FileHandle.standardError.write(Data("group-commit probe: \(error)\n".utf8))
            return 1
        }
    }

    // MARK: Names every round derives the same way

    /// The notification UUID of `sequence` in `round`: the round in the first group, the
    /// sequence in the last, so a replay names its notification by UUID alone.
    static func uuid(round: Int, sequence: Int) -> String {
        let roundHex = String(round, radix: 16)
        let sequenceHex = String(sequence, radix: 16)
        return String(repeating: "0", count: max(0, 8 - roundHex.count)) + roundHex + "-0000-4000-8000-"
            + String(repeating: "0", count: max(0, 12 - sequenceHex.count)) + sequenceHex
    }

    static func key(ofUUID uuid: String) -> (round: Int, sequence: Int)? {
        let parts = uuid.split(separator: "-")
        guard parts.count == 5, let round = Int(parts[0], radix: 16), let sequence = Int(parts[4], radix: 16)
        else { return nil }
        return (round, sequence)
    }

    /// The app account token linking task `task`'s purchases to customer `crash-user-task`.
    static func token(task: Int) -> UUID {
        UUID(uuidString: "00000000-0000-4000-8000-" + String(format: "%012d", task))!
    }

    // MARK: Setup

    static func setUp(_ options: Options) async throws {
        let ca = try TestSigning.authority(name: "Storekeeper Crash Test")
        try ca.write(to: URL(fileURLWithPath: options.ca))
        let store = try await StoreLocation(options.database).open()
        let app = AppRecord(
            id: options.appId, bundleId: bundleId, environments: [.sandbox],
            settings: AppSettings(rootCertificatesPEM: [ca.root.pem]).jsonValue)
        let catalog = ProductCatalog(products: [
            CatalogProduct(
                productId: productId, kind: .autoRenewable, subscriptionGroup: "group", groupLevel: 1,
                duration: SubscriptionPeriod(value: 1, unit: .month), entitlementIds: ["pro"])
        ])
        let tasks = options.tasks
        try await store.write { tx in
            try tx.saveApp(app, at: setupTime)
            try tx.saveCatalog(appId: app.id, catalog, at: setupTime)
            for task in 0..<tasks {
                let customer = try tx.ensureCustomer(appId: app.id, appUserId: "crash-user-\(task)", at: setupTime)
                try tx.addAppAccountToken(
                    token(task: task).uuidString.lowercased(), customerId: customer.id, at: setupTime)
            }
        }
        await store.close()
    }

    // MARK: A round

    /// Writes one line with a single `write(2)`, so a kill never leaves half of it.
    static let output = Mutex(FileHandle.standardOutput)

    static func say(_ line: String) { output.withLock { $0.write(Data((line + "\n").utf8)) } }

    static func complain(_ line: String) { FileHandle.standardError.write(Data((line + "\n").utf8)) }

    static func ingest(_ options: Options) async throws {
        let ca = try TestCertificateAuthority.read(from: URL(fileURLWithPath: options.ca))
        let store = try await StoreLocation(options.database).open(migrate: false)
        let ingestion = Ingestion(store: store)
        let app = try await ingestion.apps.runtime(appId: options.appId)
        let writer = ingestion.writer
        complain("ready")
        let reporter = Task {
            while !Task.isCancelled {
                let statistics = writer.statistics
                complain(
                    "stats batches=\(statistics.batches) groups=\(statistics.groups) "
                        + "largest=\(statistics.largestGroup)")
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        for uuid in options.replay {
            let (round, sequence) = key(ofUUID: uuid)!
            await send(
                round: round, sequence: sequence, tasks: options.tasks, retrySeconds: options.retrySeconds, ca: ca,
                ingestion, app)
        }
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<options.tasks {
                group.addTask {
                    for sequence in stride(from: task, to: options.count, by: options.tasks) {
                        await send(
                            round: options.round, sequence: sequence, tasks: options.tasks,
                            retrySeconds: options.retrySeconds, ca: ca, ingestion, app)
                    }
                }
            }
        }
        reporter.cancel()
        await store.close()
    }

    /// Signs notification `sequence` of `round` (always the same purchase, by the same
    /// customer) and ingests it; acknowledges it only once `ingest` returned. A retryable failure
    /// is sent again until `retrySeconds` have passed.
    static func send(
        round: Int, sequence: Int, tasks: Int, retrySeconds: Int, ca: TestCertificateAuthority,
        _ ingestion: Ingestion, _ app: AppRuntime
    ) async {
        let uuid = uuid(round: round, sequence: sequence)
        let payload: String
        do {
            payload = try signedNotification(uuid: uuid, round: round, sequence: sequence, tasks: tasks, ca: ca)
        } catch {
            complain("error \(uuid) signing \(error)")
            return
        }
        let deadline = ContinuousClock.now + .seconds(retrySeconds)
        while true {
            do {
                let result = try await ingestion.notifications.ingest(app: app, signedPayload: payload)
                say("ack \(uuid) \(result.outcome.rawValue)")
                return
            } catch  where error.isRetryable && ContinuousClock.now < deadline {
                complain("retry \(uuid) \(error.code.rawValue)")
                try? await Task.sleep(for: .milliseconds(50))
            } catch {
                complain("error \(uuid) \(error.code.rawValue)")
                return
            }
        }
    }

    static func signedNotification(uuid: String, round: Int, sequence: Int, tasks: Int, ca: TestCertificateAuthority)
        throws -> String
    {
        let signed = TestSigning.signedDate.adding(milliseconds: Int64(sequence))
        let id = String(1_000_000_000 * (round + 1) + sequence)
        var transaction = TestSigning.transaction(
            bundleId: bundleId, environment: .sandbox, signedDate: signed, transactionId: id)
        transaction.webOrderLineItemId = "w\(id)"
        transaction.subscriptionGroupIdentifier = "group"
        transaction.transactionReason = RawEnum(.purchase)
        transaction.appAccountToken = token(task: sequence % tasks)
        var data = NotificationData()
        data.environment = RawEnum(.sandbox)
        data.bundleId = bundleId
        data.signedTransactionInfo = try ca.signer.sign(transaction)
        var notification = ResponseBodyV2DecodedPayload()
        notification.notificationType = RawEnum(.subscribed)
        notification.subtype = RawEnum(.initialBuy)
        notification.notificationUUID = uuid
        notification.version = "2.0"
        notification.signedDate = signed
        notification.data = data
        return try ca.signer.sign(notification)
    }
}
