import AppStoreClient
import AppStoreModels
import AppStoreTrust
import Foundation
import StorekeeperTesting
import Testing

/// History, refund history and notification history as async sequences across several pages,
/// each item verified against a generated test CA.
struct PaginationTests {
    static let authority: TestCertificateAuthority = try! TestSigning.authority()

    static func verifier() throws -> SignedDataVerifier {
        try SignedDataVerifier(
            rootCertificates: [authority.root], bundleId: "com.example", appAppleId: nil, environment: .sandbox)
    }

    static func signedTransaction(_ id: String, bundleId: String = "com.example") throws -> String {
        try authority.signer.sign(TestSigning.transaction(bundleId: bundleId, transactionId: id))
    }

    static func historyPage(_ ids: [String], revision: String, hasMore: Bool) throws -> StubReply {
        let body = HistoryResponse(
            revision: revision, hasMore: hasMore, bundleId: "com.example", environment: RawEnum(.sandbox),
            signedTransactions: try ids.map { try signedTransaction($0) })
        return .json(AppStoreJSON.encode(body))
    }

    @Test func transactionHistoryAcrossThreePagesKeepsTheFilters() async throws {
        let stub = try StubAppStore([
            try Self.historyPage(["1", "2"], revision: "r1", hasMore: true),
            try Self.historyPage(["3", "4"], revision: "r2", hasMore: true),
            try Self.historyPage(["5"], revision: "r3", hasMore: false),
        ])
        defer { Task { await stub.stop() } }
        let client = try ClientFixture.client(stub)
        let filters = TransactionHistoryRequest(productTypes: [.autoRenewable], sort: .ascending)
        var ids: [String] = []
        for try await verified in client.transactionHistory(
            transactionId: "1", request: filters, verifier: try Self.verifier())
        {
            ids.append(verified.payload.transactionId ?? "")
            #expect(verified.chain != nil)
        }
        #expect(ids == ["1", "2", "3", "4", "5"])
        #expect(stub.requests.map(\.path) == Array(repeating: "/inApps/v2/history/1", count: 3))
        #expect(
            stub.requests.map(\.query) == [
                "productType=AUTO_RENEWABLE&sort=ASCENDING",
                "revision=r1&productType=AUTO_RENEWABLE&sort=ASCENDING",
                "revision=r2&productType=AUTO_RENEWABLE&sort=ASCENDING",
            ])
    }

    @Test func refundHistoryAcrossTwoPages() async throws {
        func page(_ ids: [String], revision: String, hasMore: Bool) throws -> StubReply {
            .json(
                AppStoreJSON.encode(
                    RefundHistoryResponse(
                        signedTransactions: try ids.map { try Self.signedTransaction($0) }, revision: revision,
                        hasMore: hasMore)))
        }
        let stub = try StubAppStore([
            try page(["7"], revision: "a", hasMore: true), try page(["8", "9"], revision: "b", hasMore: false),
        ])
        defer { Task { await stub.stop() } }
        let client = try ClientFixture.client(stub)
        var ids: [String] = []
        for try await verified in client.refundHistory(transactionId: "555555", verifier: try Self.verifier()) {
            ids.append(verified.payload.transactionId ?? "")
        }
        #expect(ids == ["7", "8", "9"])
        #expect(stub.requests.map(\.query) == [nil, "revision=a"])
        #expect(stub.requests.allSatisfy { $0.path == "/inApps/v2/refund/lookup/555555" })
    }

    @Test func notificationHistoryAcrossTwoPagesWithSendAttempts() async throws {
        func notification(_ uuid: String) throws -> String {
            var payload = ResponseBodyV2DecodedPayload()
            payload.notificationType = RawEnum(.subscribed)
            payload.notificationUUID = uuid
            payload.signedDate = TestSigning.signedDate
            var data = NotificationData()
            data.bundleId = "com.example"
            data.environment = RawEnum(.sandbox)
            payload.data = data
            return try Self.authority.signer.sign(payload)
        }
        func page(_ uuids: [String], token: String?, hasMore: Bool) throws -> StubReply {
            let items = try uuids.map {
                NotificationHistoryResponseItem(
                    signedPayload: try notification($0),
                    sendAttempts: [
                        SendAttemptItem(attemptDate: TestSigning.signedDate, sendAttemptResult: RawEnum(.success))
                    ])
            }
            return .json(
                AppStoreJSON.encode(
                    NotificationHistoryResponse(paginationToken: token, hasMore: hasMore, notificationHistory: items)))
        }
        let stub = try StubAppStore([
            try page(["n1", "n2"], token: "p1", hasMore: true), try page(["n3"], token: nil, hasMore: false),
        ])
        defer { Task { await stub.stop() } }
        let client = try ClientFixture.client(stub)
        let request = NotificationHistoryRequest(
            startDate: Timestamp(millisecondsSince1970: 1), endDate: Timestamp(millisecondsSince1970: 2),
            onlyFailures: true)
        var uuids: [String] = []
        for try await entry in client.notificationHistory(request: request, verifier: try Self.verifier()) {
            uuids.append(entry.notification.payload.notificationUUID ?? "")
            #expect(entry.sendAttempts.first?.sendAttemptResult == .success)
        }
        #expect(uuids == ["n1", "n2", "n3"])
        #expect(stub.requests.map(\.query) == [nil, "paginationToken=p1"])
        #expect(stub.requests.allSatisfy { $0.method == "POST" && $0.bodyJSON?["onlyFailures"] as? Bool == true })
    }

    @Test func itemFailingVerificationStopsTheSequence() async throws {
        let body = HistoryResponse(
            revision: "r", hasMore: false, bundleId: "com.example",
            signedTransactions: [try Self.signedTransaction("1", bundleId: "com.other")])
        let stub = try StubAppStore([.json(AppStoreJSON.encode(body))])
        defer { Task { await stub.stop() } }
        let client = try ClientFixture.client(stub)
        do {
            for try await _ in client.transactionHistory(transactionId: "1", verifier: try Self.verifier()) {}
            Issue.record("expected signedDataRejected")
        } catch let error as AppStoreClientError {
            #expect(error.code == .signedDataRejected)
            #expect(error.detail.contains("bundleId"))
        }
    }

    @Test func paginationThatDoesNotAdvanceFails() async throws {
        let stub = try StubAppStore([
            try Self.historyPage(["1"], revision: "same", hasMore: true),
            try Self.historyPage(["2"], revision: "same", hasMore: true),
        ])
        defer { Task { await stub.stop() } }
        let client = try ClientFixture.client(stub)
        var seen = 0
        do {
            for try await _ in client.transactionHistory(transactionId: "1", verifier: try Self.verifier()) {
                seen += 1
            }
            Issue.record("expected malformedResponse")
        } catch let error as AppStoreClientError {
            #expect(error.code == .malformedResponse)
        }
        #expect(seen == 1)
        #expect(stub.requests.count == 2)
    }
}
