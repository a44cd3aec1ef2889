import AppStoreModels
import Entitlements
import Foundation
import Storage
import StorekeeperTesting
import Testing

/// `storekeeper analytics rebuild`, run as the real binary on a SQLite file holding facts but no
/// aggregates yet: the first run reports a change, the second none; an unknown app is exit 1.
struct AnalyticsCLITests {
    @Test func rebuildSaysWhetherTheAggregatesChanged() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sk-analytics-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.db").path
        let store = try await SQLiteStore.open(path: path)
        let start = TestSigning.signedDate
        try await store.write { transaction in
            try transaction.saveApp(
                AppRecord(id: "cli-app", bundleId: "com.example", environments: [.sandbox]), at: start)
            let customer = try transaction.ensureCustomer(appId: "cli-app", appUserId: "ann", at: start)
            try transaction.claimOriginalTransaction("1", customerId: customer.id, at: start)
            _ = try transaction.insertTransaction(
                NewTransaction(
                    appId: "cli-app", jws: "jws.1",
                    fact: TransactionFact(
                        transactionId: "1", originalTransactionId: "1", productId: "monthly",
                        productKind: .autoRenewable, purchaseDate: start,
                        expiresDate: start.adding(milliseconds: 30 * 86_400_000), signedDate: start,
                        environment: .sandbox, price: 9990, currency: "USD"),
                    source: "test", receivedAt: start))
        }
        await store.close()

        let secrets = SecretsCLITests()
        let first = try secrets.run(["analytics", "rebuild", "--app", "cli-app", "--database", path])
        #expect(first == .init(status: 0, stdout: "changed: 1 customers, 0 daily rows before, 2 after\n", stderr: ""))
        let second = try secrets.run(["analytics", "rebuild", "--app", "cli-app", "--database", path])
        #expect(
            second == .init(status: 0, stdout: "unchanged: 1 customers, 2 daily rows before, 2 after\n", stderr: ""))
        let unknown = try secrets.run(["analytics", "rebuild", "--app", "nope", "--database", path])
        #expect(unknown == .init(status: 1, stdout: "", stderr: "error: no app nope\n"))
    }
}
