import AppStoreModels
import AppStoreSimulator
import AppStoreTrust
import Foundation
import Testing

/// verifyReceipt answers with Apple's status codes for receipts the simulator signed.
@Suite struct VerifyReceiptTests {
    func body(_ receipt: [UInt8]?, password: String? = nil, excludeOld: Bool? = nil) -> Data {
        AppStoreJSON.encode(
            VerifyReceiptRequestBody(
                receiptData: receipt.map { Data($0).base64EncodedString() }, password: password,
                excludeOldTransactions: excludeOld))
    }

    @Test func statusCodes() async throws {
        let authority = try StorekeeperTestingAuthority.shared()
        let sandbox = try await SimulatorFixture(environment: .sandbox, authority: authority)
        let production = try await SimulatorFixture(environment: .production, authority: authority)
        try await sandbox.act(.purchase, "alice", "monthly")
        try await sandbox.act(.renew, "alice", "monthly")
        let receipt = try await sandbox.simulator.appReceipt(customer: "alice", bundleId: SimulatorFixture.bundleId)
        let parsed = try AppReceipt(der: receipt)
        _ = try parsed.verifySignature(roots: [authority.root])
        #expect(parsed.receiptType == "ProductionSandbox")
        #expect(parsed.inAppPurchases.count == 2)

        #expect(
            await production.simulator.verifyReceipt(body: body(receipt, password: "shared-secret")).status
                == .sandboxReceiptSentToProduction)
        #expect(
            await sandbox.simulator.verifyReceipt(body: body(receipt, password: "wrong")).status
                == .sharedSecretMismatch)
        #expect(await sandbox.simulator.verifyReceipt(body: body(Array("junk".utf8))).status == .malformedReceiptData)
        #expect(await sandbox.simulator.verifyReceipt(body: Data("{}".utf8)).status == .malformedReceiptData)

        let valid = await sandbox.simulator.verifyReceipt(body: body(receipt, password: "shared-secret"))
        #expect(valid.status == .valid)
        #expect(valid.environment == .sandbox)
        #expect(valid.receipt?.bundleId == SimulatorFixture.bundleId)
        #expect(valid.latestReceiptInfo?.count == 2)
        #expect(
            valid.latestReceiptInfo?.first?.purchaseDate ?? .init(millisecondsSince1970: 0)
                > valid.latestReceiptInfo?.last?.purchaseDate ?? .init(millisecondsSince1970: 0))
        #expect(valid.pendingRenewalInfo?.first?.autoRenewStatus == .on)
        let latest = try AppReceipt(base64OrDER: Array(try #require(valid.latestReceipt).utf8))
        #expect(latest.inAppPurchases.count == 2)
        let trimmed = await sandbox.simulator.verifyReceipt(
            body: body(receipt, password: "shared-secret", excludeOld: true))
        #expect(trimmed.latestReceiptInfo?.count == 1)
        // Without the shared secret Apple leaves the latest renewals out.
        let bare = await sandbox.simulator.verifyReceipt(body: body(receipt))
        #expect(bare.status == .valid)
        #expect(bare.latestReceiptInfo == nil)

        let foreign = try TestCertificateAuthority.generate(
            validFrom: SimulatorFixture.start.adding(milliseconds: -86_400_000),
            validUntil: SimulatorFixture.start.adding(milliseconds: 86_400_000 * 400))
        let other = try await SimulatorFixture(environment: .sandbox, authority: foreign)
        let stranger = try await other.simulator.appReceipt(customer: "alice", bundleId: SimulatorFixture.bundleId)
        #expect(await sandbox.simulator.verifyReceipt(body: body(stranger)).status == .notAuthenticated)
    }
}

/// One CA for suites that need two simulators sharing a root.
enum StorekeeperTestingAuthority {
    static func shared() throws -> TestCertificateAuthority {
        try TestCertificateAuthority.generate(
            name: "Simulator Shared", validFrom: SimulatorFixture.start.adding(milliseconds: -86_400_000),
            validUntil: SimulatorFixture.start.adding(milliseconds: 5 * 365 * 86_400_000))
    }
}
