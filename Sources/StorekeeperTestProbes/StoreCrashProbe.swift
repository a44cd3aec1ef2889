import AppStoreModels
import Dispatch
import Entitlements
import Foundation
import Storage
import Synchronization

/// The child process of the crash test (`StorekeeperTestProbes crash`): ingests
/// notifications in a loop and prints each notification id on stdout only after its
/// transaction committed, so a parent that kills it with SIGKILL at any instant knows which
/// ingestions were acknowledged and must survive.
///
///     StorekeeperTestProbes crash --database URL --prefix P [--count N]
/// - Note: Runs on the calling thread, which it blocks; not for use inside async code.
public enum StoreCrashProbe {
    public static let appId = "crash-probe"
    static let now = Timestamp(millisecondsSince1970: 1_767_225_600_000)
    static let catalog = ProductCatalog(products: [
        CatalogProduct(productId: "lifetime", kind: .nonConsumable, entitlementIds: ["pro"])
    ])

    public static func run(_ arguments: [String]) -> Int32 {
        var database: String?
        var prefix = "probe"
        var count = Int.max
        var index = 0
        while index < arguments.count {
            let value = index + 1 < arguments.count ? arguments[index + 1] : nil
            switch arguments[index] {
            case "--database": database = value
            case "--prefix": prefix = value ?? prefix
            case "--count": count = value.flatMap(Int.init) ?? count
            default:
                FileHandle.standardError.write(
                    Data("usage: StorekeeperTestProbes crash --database URL --prefix P [--count N]\n".utf8))
                return 2
            }
            index += 2
        }
        guard let database else {
            FileHandle.standardError.write(Data("crash probe: --database is required\n".utf8))
            return 2
        }
        let outcome = ProbeTask.wait { [database, prefix, count] in
            try await loop(database: database, prefix: prefix, count: count)
        }
        switch outcome {
        case .failure(let error):
            FileHandle.standardError.write(Data("crash probe: \(error)\n".utf8))
            return 1
        case .success:
            return 0
        }
    }

    static func loop(database: String, prefix: String, count: Int) async throws {
        let store = try await StoreLocation(database).open()
        try await store.write { tx in
            try tx.saveApp(AppRecord(id: appId, bundleId: "com.example.probe", environments: [.sandbox]), at: now)
            try tx.saveCatalog(appId: appId, catalog, at: now)
        }
        var sequence = 0
        while sequence < count {
            let id = "\(prefix)-\(sequence)"
            let current = sequence
            _ = try await store.write(retries: 10) { tx in try ingest(id: id, sequence: current, tx) }
            // Acknowledge only after COMMIT returned.
            FileHandle.standardOutput.write(Data("\(id)\n".utf8))
            sequence += 1
        }
        await store.close()
    }

    /// A complete ingestion: notification, customer, fact, state, events.
    static func ingest(id: String, sequence: Int, _ tx: any StoreTransaction) throws -> Bool {
        let signedAt = now.adding(milliseconds: Int64(sequence))
        let transaction = TransactionFact(
            transactionId: "\(id)-t", originalTransactionId: "\(id)-t", productId: "lifetime", purchaseDate: signedAt,
            signedDate: signedAt, environment: .sandbox, price: 1000, currency: "USD")
        let insertion = try tx.insertNotification(
            NewNotification(
                appId: appId, notificationUUID: id, type: "ONE_TIME_CHARGE", subtype: nil, environment: .sandbox,
                originalTransactionId: transaction.originalTransactionId, signedDate: signedAt,
                signedPayload: "probe.\(id).payload", fact: nil, receivedAt: signedAt))
        guard case .inserted(let notificationId) = insertion else { return false }
        let customer = try tx.ensureCustomer(appId: appId, appUserId: "probe-user-\(sequence % 50)", at: signedAt)
        try tx.claimOriginalTransaction(transaction.originalTransactionId, customerId: customer.id, at: signedAt)
        _ = try tx.insertTransaction(
            NewTransaction(
                appId: appId, jws: "probe.\(id).jws", fact: transaction, source: "probe", receivedAt: signedAt))
        let previous = try tx.customerInfo(customerId: customer.id, environment: .sandbox)
        let evaluation = EntitlementEngine.evaluate(
            customerId: customer.appUserId, environment: .sandbox, facts: try tx.facts(customerId: customer.id),
            catalog: catalog, now: signedAt, previous: previous?.info)
        _ = try tx.saveCustomerInfo(
            evaluation.customerInfo, customerId: customer.id, expectedVersion: previous?.version, at: signedAt)
        let events = try tx.appendEvents(evaluation.newEvents, customerId: customer.id, at: signedAt)
        try tx.enqueueDeliveries(of: events, appId: appId, at: signedAt)
        try tx.finishNotification(id: notificationId, outcome: "processed", at: signedAt)
        return true
    }
}
