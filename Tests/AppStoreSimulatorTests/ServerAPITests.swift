import AppStoreClient
import AppStoreModels
import AppStoreSimulator
import AppStoreTrust
import Foundation
import Testing

/// Our own App Store Server API client against the simulator on a loopback port: every
/// response must decode into AppStoreModels and every signed item verify.
@Suite struct ServerAPITests {
    func client(_ fixture: SimulatorFixture, _ server: SimulatorServer) throws -> AppStoreServerAPIClient {
        let configuration = try AppStoreServerAPIConfiguration(
            bundleId: SimulatorFixture.bundleId, keyId: fixture.keyId, issuerId: fixture.issuerId,
            environment: .sandbox, baseURL: server.baseURL, retry: RetryPolicy(maxAttempts: 1))
        return try AppStoreServerAPIClient(
            configuration: configuration, signingKey: fixture.apiKey,
            tokenClock: { [clock = fixture.clock] in clock.now })
    }

    @Test func everyReadEndpointDecodesAndVerifies() async throws {
        let fixture = try await SimulatorFixture()
        let server = try SimulatorServer(simulator: fixture.simulator, tickInterval: nil)
        defer { Task { await server.stop() } }
        let api = try client(fixture, server)
        let verifier = try fixture.verifier()
        let subscription = try #require(try await fixture.act(.purchase, "alice", "monthly").transactionId)
        for _ in 0..<24 { try await fixture.act(.purchase, "alice", "coins") }
        try await fixture.act(.renew, "alice", "monthly")
        try await fixture.act(.refund, "alice", "coins") { $0.reason = "developerIssue" }

        let info = try await api.getTransactionInfo(transactionId: subscription)
        let transaction = try verifier.verifyAndDecodeTransaction(try #require(info.signedTransactionInfo)).payload
        #expect(transaction.productId == "monthly")
        #expect(transaction.offerType == .introductoryOffer)
        #expect(transaction.offerDiscountType == .freeTrial)
        #expect(transaction.price == 0)

        for version in [TransactionHistoryVersion.v1, .v2] {
            var revision: String?
            var ids: [String] = []
            var pages = 0
            repeat {
                let page = try await api.getTransactionHistory(
                    transactionId: subscription, revision: revision, version: version)
                pages += 1
                #expect((page.signedTransactions ?? []).count <= 20)
                for signed in page.signedTransactions ?? [] {
                    ids.append(try #require(try verifier.verifyAndDecodeTransaction(signed).payload.transactionId))
                }
                revision = page.revision
                if page.hasMore != true { break }
            } while true
            #expect(pages == 2)
            #expect(ids.count == 26)
            #expect(Set(ids).count == ids.count)
        }

        let statuses = try await api.getAllSubscriptionStatuses(transactionId: subscription)
        let item = try #require(statuses.data?.first?.lastTransactions?.first)
        #expect(item.status == .active)
        let renewal = try verifier.verifyAndDecodeRenewalInfo(try #require(item.signedRenewalInfo)).payload
        #expect(renewal.autoRenewStatus == .on)
        #expect(renewal.renewalPrice == 5_990)
        let expired = try await api.getAllSubscriptionStatuses(transactionId: subscription, status: [.expired])
        #expect(expired.data?.isEmpty == true)

        let refunds = try await api.getRefundHistory(transactionId: subscription, revision: nil)
        #expect(refunds.signedTransactions?.count == 1)
        #expect(refunds.hasMore == false)

        let app = try await api.getAppTransactionInfo(transactionId: subscription)
        _ = try verifier.verifyAndDecodeAppTransaction(try #require(app.signedAppTransactionInfo))

        let order = try #require(await fixture.simulator.orderId(transactionId: subscription))
        let lookup = try await api.lookUpOrderId(orderId: order)
        #expect(lookup.status == .valid)
        #expect(try await api.lookUpOrderId(orderId: "MKNOTHERE").status == .invalid)

        let history = try await api.getNotificationHistory(
            paginationToken: nil,
            request: NotificationHistoryRequest(
                startDate: SimulatorFixture.start.adding(milliseconds: -1),
                endDate: fixture.clock.now.adding(milliseconds: 1)))
        #expect(history.hasMore == true)
        #expect(history.notificationHistory?.count == 20)
        for entry in history.notificationHistory ?? [] {
            _ = try verifier.verifyAndDecodeNotificationContents(try #require(entry.signedPayload))
        }
        let next = try await api.getNotificationHistory(
            paginationToken: history.paginationToken,
            request: NotificationHistoryRequest(
                startDate: SimulatorFixture.start.adding(milliseconds: -1),
                endDate: fixture.clock.now.adding(milliseconds: 1)))
        #expect((next.notificationHistory ?? []).count == 7)
        #expect(next.hasMore == false)
    }

    @Test func writesTestNotificationsAndExtensions() async throws {
        let fixture = try await SimulatorFixture()
        let server = try SimulatorServer(simulator: fixture.simulator, tickInterval: nil)
        defer { Task { await server.stop() } }
        let api = try client(fixture, server)
        let subscription = try #require(try await fixture.act(.purchase, "alice", "yearly").transactionId)

        let test = try await api.requestTestNotification()
        let status = try await api.getTestNotificationStatus(
            testNotificationToken: try #require(test.testNotificationToken))
        #expect(status.sendAttempts?.first?.sendAttemptResult == .success)
        let decoded = try fixture.verifier().verifyAndDecodeNotification(try #require(status.signedPayload)).payload
        #expect(decoded.notificationType == .test)

        let extended = try await api.extendSubscriptionRenewalDate(
            originalTransactionId: subscription,
            request: ExtendRenewalDateRequest(
                extendByDays: 30, extendReasonCode: RawEnum(.customerSatisfaction), requestIdentifier: "r1"))
        #expect(extended.success == true)
        #expect(
            extended.effectiveDate
                == TimeScale.calendar.adding(.year, to: SimulatorFixture.start).adding(milliseconds: 30 * 86_400_000))
        await #expect(throws: AppStoreClientError.self) {
            _ = try await api.extendSubscriptionRenewalDate(
                originalTransactionId: subscription,
                request: ExtendRenewalDateRequest(
                    extendByDays: 91, extendReasonCode: RawEnum(.other), requestIdentifier: "r2"))
        }
        _ = try await api.extendRenewalDateForAllActiveSubscribers(
            request: MassExtendRenewalDateRequest(
                extendByDays: 5, extendReasonCode: RawEnum(.other), requestIdentifier: "mass1", productId: "yearly"))
        let mass = try await api.getStatusOfSubscriptionRenewalDateExtensions(
            productId: "yearly", requestIdentifier: "mass1")
        #expect(mass.complete == true)
        #expect(mass.succeededCount == 1)  // family copies follow the purchaser, they are not counted
        // A third extension within a year is refused (4030005).
        do {
            _ = try await api.extendSubscriptionRenewalDate(
                originalTransactionId: subscription,
                request: ExtendRenewalDateRequest(
                    extendByDays: 1, extendReasonCode: RawEnum(.other), requestIdentifier: "r3"))
            Issue.record("third extension accepted")
        } catch {
            #expect(error.apiError == .subscriptionMaxExtension)
        }

        try await api.sendConsumptionInformation(
            transactionId: subscription,
            request: ConsumptionRequest(
                customerConsented: true, deliveryStatus: RawEnum(rawValue: "DELIVERED"), sampleContentProvided: false))
        #expect(await fixture.simulator.consumptionInformation(transactionId: subscription) != nil)
        try await api.setAppAccountToken(
            originalTransactionId: subscription,
            request: UpdateAppAccountTokenRequest(
                appAccountToken: UUID(uuidString: "7E3FB20B-4CDB-47CC-936D-99D65F608138")))
        let info = try await api.getTransactionInfo(transactionId: subscription)
        let signed = try #require(info.signedTransactionInfo)
        let payloadJSON = String(
            decoding: try #require(Data(base64URL: signed.split(separator: ".")[1])), as: UTF8.self)
        #expect(payloadJSON.contains("\"appAccountToken\":\"7e3fb20b-4cdb-47cc-936d-99d65f608138\""))
        #expect(!payloadJSON.contains("null"))
    }
}

extension Data {
    init?(base64URL text: Substring) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        self.init(base64Encoded: base64)
    }
}
