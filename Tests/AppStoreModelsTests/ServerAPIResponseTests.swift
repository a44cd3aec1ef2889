import AppStoreModels
import Foundation
import Testing

/// App Store Server API response bodies from Apple's corpus decode to the values Apple's client
/// tests assert, and re-encode without losing a field.
@Suite(.enabled(if: Corpus.isAvailable, Corpus.missingMessage))
struct ServerAPIResponseTests {
    @Test func transactionInfoResponse() throws {
        let r = try decodeLosslessly(
            TransactionInfoResponse.self, Corpus.model("transactionInfoResponse.json"))
        #expect(r.signedTransactionInfo == "signed_transaction_info_value")
    }

    @Test func appTransactionInfoResponse() throws {
        let r = try decodeLosslessly(
            AppTransactionInfoResponse.self, Corpus.model("appTransactionInfoResponse.json"))
        #expect(r.signedAppTransactionInfo == "signed_app_transaction_info_value")
    }

    @Test func transactionHistoryResponse() throws {
        let r = try decodeLosslessly(
            HistoryResponse.self, Corpus.model("transactionHistoryResponse.json"))
        #expect(r.revision == "revision_output")
        #expect(r.hasMore == true)
        #expect(r.bundleId == "com.example")
        #expect(r.appAppleId == 323232)
        #expect(r.environment == .localTesting)
        #expect(r.signedTransactions == ["signed_transaction_value", "signed_transaction_value2"])
    }

    @Test func getAllSubscriptionStatusesResponse() throws {
        let r = try decodeLosslessly(
            StatusResponse.self, Corpus.model("getAllSubscriptionStatusesResponse.json"))
        #expect(r.environment == .localTesting)
        #expect(r.bundleId == "com.example")
        #expect(r.appAppleId == 5_454_545)
        let groups = try #require(r.data)
        #expect(groups.count == 2)
        #expect(groups[0].subscriptionGroupIdentifier == "sub_group_one")
        let first = try #require(groups[0].lastTransactions)
        #expect(first.count == 2)
        #expect(first[0].status == .active)
        #expect(first[0].originalTransactionId == "3749183")
        #expect(first[0].signedTransactionInfo == "signed_transaction_one")
        #expect(first[0].signedRenewalInfo == "signed_renewal_one")
        #expect(first[1].status == .revoked)
        #expect(first[1].status?.rawValue == 5)
        #expect(first[1].originalTransactionId == "5314314134")
        #expect(first[1].signedTransactionInfo == "signed_transaction_two")
        #expect(first[1].signedRenewalInfo == "signed_renewal_two")
        #expect(groups[1].subscriptionGroupIdentifier == "sub_group_two")
        let second = try #require(groups[1].lastTransactions)
        #expect(second.count == 1)
        #expect(second[0].status == .expired)
        #expect(second[0].originalTransactionId == "3413453")
        #expect(second[0].signedTransactionInfo == "signed_transaction_three")
        #expect(second[0].signedRenewalInfo == "signed_renewal_three")
    }

    @Test func getRefundHistoryResponse() throws {
        let r = try decodeLosslessly(
            RefundHistoryResponse.self, Corpus.model("getRefundHistoryResponse.json"))
        #expect(r.signedTransactions == ["signed_transaction_one", "signed_transaction_two"])
        #expect(r.revision == "revision_output")
        #expect(r.hasMore == true)
    }

    @Test func lookupOrderIdResponse() throws {
        let r = try decodeLosslessly(
            OrderLookupResponse.self, Corpus.model("lookupOrderIdResponse.json"))
        #expect(r.status == .invalid)
        #expect(r.status?.rawValue == 1)
        #expect(r.signedTransactions == ["signed_transaction_one", "signed_transaction_two"])
    }

    @Test func extendSubscriptionRenewalDateResponse() throws {
        let r = try decodeLosslessly(
            ExtendRenewalDateResponse.self, Corpus.model("extendSubscriptionRenewalDateResponse.json"))
        #expect(r.originalTransactionId == "2312412")
        #expect(r.webOrderLineItemId == "9993")
        #expect(r.success == true)
        #expect(r.effectiveDate == Timestamp(millisecondsSince1970: 1_698_148_900_000))
    }

    @Test func extendRenewalDateForAllActiveSubscribersResponse() throws {
        let r = try decodeLosslessly(
            MassExtendRenewalDateResponse.self,
            Corpus.model("extendRenewalDateForAllActiveSubscribersResponse.json"))
        #expect(r.requestIdentifier == "758883e8-151b-47b7-abd0-60c4d804c2f5")
    }

    @Test func getStatusOfSubscriptionRenewalDateExtensionsResponse() throws {
        let r = try decodeLosslessly(
            MassExtendRenewalDateStatusResponse.self,
            Corpus.model("getStatusOfSubscriptionRenewalDateExtensionsResponse.json"))
        #expect(r.requestIdentifier == "20fba8a0-2b80-4a7d-a17f-85c1854727f8")
        #expect(r.complete == true)
        #expect(r.completeDate == Timestamp(millisecondsSince1970: 1_698_148_900_000))
        #expect(r.succeededCount == 30)
        #expect(r.failedCount == 2)
    }

    @Test func requestTestNotificationResponse() throws {
        let r = try decodeLosslessly(
            SendTestNotificationResponse.self, Corpus.model("requestTestNotificationResponse.json"))
        #expect(r.testNotificationToken == "ce3af791-365e-4c60-841b-1674b43c1609")
    }

    @Test func getTestNotificationStatusResponse() throws {
        let r = try decodeLosslessly(
            CheckTestNotificationResponse.self, Corpus.model("getTestNotificationStatusResponse.json"))
        #expect(r.signedPayload == "signed_payload")
        #expect(
            r.sendAttempts == [
                SendAttemptItem(
                    attemptDate: Timestamp(millisecondsSince1970: 1_698_148_900_000),
                    sendAttemptResult: RawEnum(.noResponse)),
                SendAttemptItem(
                    attemptDate: Timestamp(millisecondsSince1970: 1_698_148_950_000),
                    sendAttemptResult: RawEnum(.success)),
            ])
    }

    @Test func getNotificationHistoryResponse() throws {
        let r = try decodeLosslessly(
            NotificationHistoryResponse.self, Corpus.model("getNotificationHistoryResponse.json"))
        #expect(r.paginationToken == "57715481-805a-4283-8499-1c19b5d6b20a")
        #expect(r.hasMore == true)
        let items = try #require(r.notificationHistory)
        #expect(items.count == 2)
        #expect(items[0].signedPayload == "signed_payload_one")
        #expect(
            items[0].sendAttempts?.map(\.sendAttemptResult) == [RawEnum(.noResponse), RawEnum(.success)])
        #expect(
            items[0].sendAttempts?.map(\.attemptDate)
                == [
                    Timestamp(millisecondsSince1970: 1_698_148_900_000),
                    Timestamp(millisecondsSince1970: 1_698_148_950_000),
                ])
        #expect(items[1].signedPayload == "signed_payload_two")
        #expect(items[1].sendAttempts?.first?.sendAttemptResult == .circularRedirect)
        #expect(
            items[1].sendAttempts?.first?.attemptDate
                == Timestamp(millisecondsSince1970: 1_698_148_800_000))
    }
}

/// Apple's malformed bodies: an unknown environment is kept, a wrongly typed app ID fails and
/// names the field.
@Suite(.enabled(if: Corpus.isAvailable, Corpus.missingMessage))
struct MalformedResponseTests {
    @Test func unknownEnvironmentKeepsRawValue() throws {
        let r = try decodeLosslessly(
            HistoryResponse.self, Corpus.model("transactionHistoryResponseWithMalformedEnvironment.json"))
        #expect(r.environment?.value == nil)
        #expect(r.environment?.rawValue == "LocalTestingxxx")
        #expect(r.appAppleId == 323232)
        #expect(r.signedTransactions?.count == 2)
        #expect(AppStoreJSON.encode(r).contains("LocalTestingxxx".utf8Data))
    }

    @Test(arguments: [
        "models/transactionHistoryResponseWithMalformedAppAppleId.json",
        "python-variants/models/transactionHistoryResponseWithMalformedAppAppleId.json",
    ])
    func malformedAppAppleIdFailsNamingTheField(path: String) throws {
        let data = try Corpus.data(path)
        let error = #expect(throws: ModelDecodingError.self) {
            try AppStoreJSON.decode(HistoryResponse.self, from: data)
        }
        #expect(error?.path == "appAppleId")
        #expect(error?.kind == .wrongType)
        #expect(error?.type == "HistoryResponse")
    }
}

extension Data {
    func contains(_ other: Data) -> Bool { range(of: other) != nil }
}
