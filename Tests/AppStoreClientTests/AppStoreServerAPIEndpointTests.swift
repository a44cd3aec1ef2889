import AppStoreClient
import AppStoreModels
import Foundation
import StorekeeperTesting
import Testing

/// Every endpoint against the loopback stub: method, path, query, headers (token verified)
/// and body as Apple's library tests expect them, answered with the corpus' mock responses.
@Suite(.enabled(if: Conformance.isAvailable, "\(Conformance.skipMessage)"))
struct AppStoreServerAPIEndpointTests {
    /// Runs one call against a fresh stub and returns what the stub saw.
    func exchange<T>(
        _ reply: StubReply, _ call: (AppStoreServerAPIClient) async throws -> T
    ) async throws -> (RecordedRequest, T) {
        let stub = try StubAppStore([reply])
        defer { Task { await stub.stop() } }
        let client = try ClientFixture.client(stub)
        let result = try await call(client)
        let request = try #require(stub.requests.first)
        #expect(stub.requests.count == 1)
        _ = try ClientFixture.verifyToken(request)
        #expect(request.header("Accept") == "application/json")
        return (request, result)
    }

    func queryList(_ request: RecordedRequest) -> [String] { request.queryItems.map { "\($0.name)=\($0.value)" } }

    /// The body as sorted-key JSON text, for exact comparison.
    func canonical(_ data: Data) throws -> String {
        let object = try JSONSerialization.jsonObject(with: data)
        return String(
            decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    func canonical(_ text: String) throws -> String { try canonical(Data(text.utf8)) }

    @Test func transactionInfo() async throws {
        let (request, response) = try await exchange(try .corpus("transactionInfoResponse.json")) {
            try await $0.getTransactionInfo(transactionId: "1234")
        }
        #expect(request.method == "GET")
        #expect(request.path == "/inApps/v1/transactions/1234")
        #expect(request.query == nil)
        #expect(request.body.isEmpty)
        #expect(response.signedTransactionInfo == "signed_transaction_info_value")
    }

    @Test(arguments: [TransactionHistoryVersion.v1, .v2])
    func transactionHistoryWithEveryFilter(version: TransactionHistoryVersion) async throws {
        let filters = TransactionHistoryRequest(
            startDate: Timestamp(millisecondsSince1970: 123455), endDate: Timestamp(millisecondsSince1970: 123456),
            productIds: ["com.example.1", "com.example.2"], productTypes: [.consumable, .autoRenewable],
            sort: .ascending, subscriptionGroupIdentifiers: ["sub_group_id", "sub_group_id_2"],
            inAppOwnershipType: .familyShared, revoked: false)
        let (request, response) = try await exchange(try .corpus("transactionHistoryResponse.json")) {
            try await $0.getTransactionHistory(
                transactionId: "1234", revision: "revision_input", request: filters, version: version)
        }
        #expect(request.method == "GET")
        #expect(request.path == "/inApps/\(version.rawValue)/history/1234")
        #expect(
            queryList(request) == [
                "revision=revision_input", "startDate=123455", "endDate=123456", "productId=com.example.1",
                "productId=com.example.2", "productType=CONSUMABLE", "productType=AUTO_RENEWABLE", "sort=ASCENDING",
                "subscriptionGroupIdentifier=sub_group_id", "subscriptionGroupIdentifier=sub_group_id_2",
                "inAppOwnershipType=FAMILY_SHARED", "revoked=false",
            ])
        #expect(response.revision == "revision_output")
        #expect(response.hasMore == true)
        #expect(response.bundleId == "com.example")
        #expect(response.appAppleId == 323232)
        #expect(response.environment == .localTesting)
        #expect(response.signedTransactions == ["signed_transaction_value", "signed_transaction_value2"])
    }

    @Test func allSubscriptionStatusesWithStatusFilter() async throws {
        let (request, response) = try await exchange(try .corpus("getAllSubscriptionStatusesResponse.json")) {
            try await $0.getAllSubscriptionStatuses(transactionId: "4321", status: [.expired, .active])
        }
        #expect(request.method == "GET")
        #expect(request.path == "/inApps/v1/subscriptions/4321")
        #expect(request.query == "status=2&status=1")
        #expect(response.environment == .localTesting)
        #expect(response.appAppleId == 5454545)
        let groups = try #require(response.data)
        #expect(groups.map(\.subscriptionGroupIdentifier) == ["sub_group_one", "sub_group_two"])
        #expect(groups[0].lastTransactions?.map(\.originalTransactionId) == ["3749183", "5314314134"])
        #expect(groups[0].lastTransactions?.map { $0.status?.value } == [.active, .revoked])
        #expect(groups[1].lastTransactions?.first?.status == .expired)
    }

    @Test func refundHistory() async throws {
        let (request, response) = try await exchange(try .corpus("getRefundHistoryResponse.json")) {
            try await $0.getRefundHistory(transactionId: "555555", revision: "revision_input")
        }
        #expect(request.method == "GET")
        #expect(request.path == "/inApps/v2/refund/lookup/555555")
        #expect(request.query == "revision=revision_input")
        #expect(response.signedTransactions?.count == 2)
        #expect(response.revision == "revision_output")
        #expect(response.hasMore == true)
    }

    @Test func orderLookup() async throws {
        let (request, response) = try await exchange(try .corpus("lookupOrderIdResponse.json")) {
            try await $0.lookUpOrderId(orderId: "W002182")
        }
        #expect(request.method == "GET")
        #expect(request.path == "/inApps/v1/lookup/W002182")
        #expect(response.status == .invalid)
        #expect(response.signedTransactions?.count == 2)
    }

    @Test func appTransactionInfo() async throws {
        let (request, response) = try await exchange(try .corpus("appTransactionInfoResponse.json")) {
            try await $0.getAppTransactionInfo(transactionId: "1234")
        }
        #expect(request.method == "GET")
        #expect(request.path == "/inApps/v1/transactions/appTransactions/1234")
        #expect(response.signedAppTransactionInfo == "signed_app_transaction_info_value")
    }

    @Test func finishTransaction() async throws {
        let (request, _) = try await exchange(.empty()) { try await $0.finishTransaction(transactionId: "1234") }
        #expect(request.method == "POST")
        #expect(request.path == "/inApps/v1/transactions/1234/finish")
        #expect(request.body.isEmpty)
    }

    @Test func setAppAccountToken() async throws {
        let token = UUID(uuidString: "7389a31a-fb6d-4569-a2a6-db7d85d84813")!
        let (request, _) = try await exchange(.empty()) {
            try await $0.setAppAccountToken(
                originalTransactionId: "49571273", request: UpdateAppAccountTokenRequest(appAccountToken: token))
        }
        #expect(request.method == "PUT")
        #expect(request.path == "/inApps/v1/transactions/49571273/appAccountToken")
        #expect(request.header("Content-Type") == "application/json")
        let sent = try #require(request.bodyJSON?["appAccountToken"] as? String)
        #expect(UUID(uuidString: sent) == token)
    }

    @Test func consumptionInformationV2() async throws {
        let body = ConsumptionRequest(
            customerConsented: true, consumptionPercentage: 50000, deliveryStatus: RawEnum(.delivered),
            refundPreference: RawEnum(.grantProrated), sampleContentProvided: false)
        let (request, _) = try await exchange(.empty(status: 202)) {
            try await $0.sendConsumptionInformation(transactionId: "49571273", request: body)
        }
        #expect(request.method == "PUT")
        #expect(request.path == "/inApps/v2/transactions/consumption/49571273")
        #expect(request.header("Content-Type") == "application/json")
        #expect(
            try canonical(request.body)
                == canonical(
                    #"""
                    {"customerConsented":true,"consumptionPercentage":50000,"deliveryStatus":"DELIVERED",
                     "refundPreference":"GRANT_PRORATED","sampleContentProvided":false}
                    """#))
    }

    @Test func consumptionInformationV1() async throws {
        var body = ConsumptionRequestV1()
        body.customerConsented = true
        body.consumptionStatus = RawEnum(rawValue: 1)
        body.platform = RawEnum(rawValue: 2)
        body.sampleContentProvided = false
        body.deliveryStatus = RawEnum(rawValue: 3)
        body.appAccountToken = UUID(uuidString: "7389a31a-fb6d-4569-a2a6-db7d85d84813")
        body.accountTenure = RawEnum(rawValue: 4)
        body.playTime = RawEnum(rawValue: 5)
        body.lifetimeDollarsRefunded = RawEnum(rawValue: 6)
        body.lifetimeDollarsPurchased = RawEnum(rawValue: 7)
        body.userStatus = RawEnum(rawValue: 4)
        body.refundPreference = RawEnum(rawValue: 3)
        let (request, _) = try await exchange(.empty(status: 202)) {
            try await $0.sendConsumptionInformationV1(transactionId: "49571273", request: body)
        }
        #expect(request.method == "PUT")
        #expect(request.path == "/inApps/v1/transactions/consumption/49571273")
        let json = try #require(request.bodyJSON)
        #expect(json["customerConsented"] as? Bool == true)
        #expect(json["consumptionStatus"] as? Int == 1)
        #expect(json["platform"] as? Int == 2)
        #expect(json["deliveryStatus"] as? Int == 3)
        #expect(json["accountTenure"] as? Int == 4)
        #expect(json["playTime"] as? Int == 5)
        #expect(json["lifetimeDollarsRefunded"] as? Int == 6)
        #expect(json["lifetimeDollarsPurchased"] as? Int == 7)
        #expect(json["userStatus"] as? Int == 4)
        #expect(json["refundPreference"] as? Int == 3)
        #expect(try AppStoreJSON.decode(ConsumptionRequestV1.self, from: request.body) == body)
    }

    @Test func extendSubscriptionRenewalDate() async throws {
        let body = ExtendRenewalDateRequest(
            extendByDays: 45, extendReasonCode: RawEnum(.customerSatisfaction),
            requestIdentifier: "fdf964a4-233b-486c-aac1-97d8d52688ac")
        let (request, response) = try await exchange(try .corpus("extendSubscriptionRenewalDateResponse.json")) {
            try await $0.extendSubscriptionRenewalDate(originalTransactionId: "4124214", request: body)
        }
        #expect(request.method == "PUT")
        #expect(request.path == "/inApps/v1/subscriptions/extend/4124214")
        #expect(
            try canonical(request.body)
                == canonical(
                    #"{"extendByDays":45,"extendReasonCode":1,"requestIdentifier":"fdf964a4-233b-486c-aac1-97d8d52688ac"}"#
                ))
        #expect(response.originalTransactionId == "2312412")
        #expect(response.webOrderLineItemId == "9993")
        #expect(response.success == true)
        #expect(response.effectiveDate == Timestamp(millisecondsSince1970: 1698148900000))
    }

    @Test func extendForAllActiveSubscribers() async throws {
        let body = MassExtendRenewalDateRequest(
            extendByDays: 45, extendReasonCode: RawEnum(.customerSatisfaction),
            requestIdentifier: "fdf964a4-233b-486c-aac1-97d8d52688ac", storefrontCountryCodes: ["USA", "MEX"],
            productId: "com.example.productId")
        let (request, response) = try await exchange(
            try .corpus("extendRenewalDateForAllActiveSubscribersResponse.json")
        ) {
            try await $0.extendRenewalDateForAllActiveSubscribers(request: body)
        }
        #expect(request.method == "POST")
        #expect(request.path == "/inApps/v1/subscriptions/extend/mass")
        #expect(
            try canonical(request.body)
                == canonical(
                    #"""
                    {"extendByDays":45,"extendReasonCode":1,"requestIdentifier":"fdf964a4-233b-486c-aac1-97d8d52688ac",
                     "storefrontCountryCodes":["USA","MEX"],"productId":"com.example.productId"}
                    """#))
        #expect(response.requestIdentifier == "758883e8-151b-47b7-abd0-60c4d804c2f5")
    }

    @Test func massExtensionStatus() async throws {
        let (request, response) = try await exchange(
            try .corpus("getStatusOfSubscriptionRenewalDateExtensionsResponse.json")
        ) {
            try await $0.getStatusOfSubscriptionRenewalDateExtensions(
                productId: "com.example.product", requestIdentifier: "20fba8a0-2b80-4a7d-a17f-85c1854727f8")
        }
        #expect(request.method == "GET")
        #expect(
            request.path
                == "/inApps/v1/subscriptions/extend/mass/com.example.product/20fba8a0-2b80-4a7d-a17f-85c1854727f8")
        #expect(response.requestIdentifier == "20fba8a0-2b80-4a7d-a17f-85c1854727f8")
        #expect(response.complete == true)
        #expect(response.completeDate == Timestamp(millisecondsSince1970: 1698148900000))
        #expect(response.succeededCount == 30)
        #expect(response.failedCount == 2)
    }

    @Test func notificationHistoryWithFiltersAndTruncatedDates() async throws {
        // 0.9 ms past the whole millisecond: Apple needs integers, so it must go out truncated.
        let body = NotificationHistoryRequest(
            startDate: Timestamp(Date(timeIntervalSince1970: 1_698_148_900.000_9)),
            endDate: Timestamp(millisecondsSince1970: 1_698_148_950_000),
            notificationType: RawEnum(.subscribed), notificationSubtype: RawEnum(.initialBuy),
            transactionId: "999733843", onlyFailures: true)
        let (request, response) = try await exchange(try .corpus("getNotificationHistoryResponse.json")) {
            try await $0.getNotificationHistory(paginationToken: "a036bc0e-52b8-4bee-82fc-8c24cb6715d6", request: body)
        }
        #expect(request.method == "POST")
        #expect(request.path == "/inApps/v1/notifications/history")
        #expect(request.query == "paginationToken=a036bc0e-52b8-4bee-82fc-8c24cb6715d6")
        #expect(request.header("Content-Type") == "application/json")
        #expect(
            try canonical(request.body)
                == canonical(
                    #"""
                    {"startDate":1698148900000,"endDate":1698148950000,"notificationType":"SUBSCRIBED",
                     "notificationSubtype":"INITIAL_BUY","transactionId":"999733843","onlyFailures":true}
                    """#))
        #expect(response.paginationToken == "57715481-805a-4283-8499-1c19b5d6b20a")
        #expect(response.hasMore == true)
        #expect(response.notificationHistory?.count == 2)
        #expect(
            response.notificationHistory?.first?.sendAttempts?.map { $0.sendAttemptResult?.rawValue } == [
                "NO_RESPONSE", "SUCCESS",
            ])
    }

    @Test func requestTestNotification() async throws {
        let (request, response) = try await exchange(try .corpus("requestTestNotificationResponse.json")) {
            try await $0.requestTestNotification()
        }
        #expect(request.method == "POST")
        #expect(request.path == "/inApps/v1/notifications/test")
        #expect(request.body.isEmpty)
        #expect(response.testNotificationToken == "ce3af791-365e-4c60-841b-1674b43c1609")
    }

    @Test func testNotificationStatus() async throws {
        let (request, response) = try await exchange(try .corpus("getTestNotificationStatusResponse.json")) {
            try await $0.getTestNotificationStatus(testNotificationToken: "8cd2974c-f905-492a-bf9a-b2f47c791d19")
        }
        #expect(request.method == "GET")
        #expect(request.path == "/inApps/v1/notifications/test/8cd2974c-f905-492a-bf9a-b2f47c791d19")
        #expect(response.signedPayload == "signed_payload")
        #expect(
            response.sendAttempts?.map(\.attemptDate) == [
                Timestamp(millisecondsSince1970: 1698148900000), Timestamp(millisecondsSince1970: 1698148950000),
            ])
        #expect(response.sendAttempts?.map { $0.sendAttemptResult?.rawValue } == ["NO_RESPONSE", "SUCCESS"])
    }

    // MARK: Retention messaging

    static let imageId = UUID(uuidString: "A1B2C3D4-E5F6-7890-A1B2-C3D4E5F67890")!

    @Test func uploadImageSendsPNGWithLowercaseIdentifier() async throws {
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3])
        let (request, _) = try await exchange(.empty()) {
            try await $0.uploadImage(imageIdentifier: Self.imageId, png: png, imageSize: .fullSize)
        }
        #expect(request.method == "PUT")
        #expect(request.path == "/inApps/v1/messaging/image/a1b2c3d4-e5f6-7890-a1b2-c3d4e5f67890")
        #expect(request.query == "imageSize=FULL_SIZE")
        #expect(request.header("Content-Type") == "image/png")
        #expect(request.body == png)
    }

    @Test func deleteImage() async throws {
        let (request, _) = try await exchange(.empty()) { try await $0.deleteImage(imageIdentifier: Self.imageId) }
        #expect(request.method == "DELETE")
        #expect(request.path == "/inApps/v1/messaging/image/a1b2c3d4-e5f6-7890-a1b2-c3d4e5f67890")
    }

    @Test func imageList() async throws {
        let (request, response) = try await exchange(try .corpus("getImageListResponse.json")) {
            try await $0.getImageList()
        }
        #expect(request.method == "GET")
        #expect(request.path == "/inApps/v1/messaging/image/list")
        #expect(response.imageIdentifiers?.count == 1)
        #expect(response.imageIdentifiers?.first?.imageIdentifier == Self.imageId)
    }

    @Test func uploadMessage() async throws {
        let body = UploadMessageRequestBody(
            header: "Header text", body: "Body text",
            image: UploadMessageImage(imageIdentifier: Self.imageId, altText: "Alt text"))
        let (request, _) = try await exchange(.empty()) {
            try await $0.uploadMessage(messageIdentifier: Self.imageId, request: body)
        }
        #expect(request.method == "PUT")
        #expect(request.path == "/inApps/v1/messaging/message/a1b2c3d4-e5f6-7890-a1b2-c3d4e5f67890")
        let json = try #require(request.bodyJSON)
        #expect(json["header"] as? String == "Header text")
        #expect(json["body"] as? String == "Body text")
        #expect((json["image"] as? [String: Any])?["altText"] as? String == "Alt text")
    }

    @Test func deleteMessageAndMessageList() async throws {
        let (deleted, _) = try await exchange(.empty()) { try await $0.deleteMessage(messageIdentifier: Self.imageId) }
        #expect(deleted.method == "DELETE")
        #expect(deleted.path == "/inApps/v1/messaging/message/a1b2c3d4-e5f6-7890-a1b2-c3d4e5f67890")
        let (listed, response) = try await exchange(try .corpus("getMessageListResponse.json")) {
            try await $0.getMessageList()
        }
        #expect(listed.method == "GET")
        #expect(listed.path == "/inApps/v1/messaging/message/list")
        #expect(response.messageIdentifiers?.count == 1)
    }

    @Test func defaultMessageConfigureGetDelete() async throws {
        let (configured, _) = try await exchange(.empty()) {
            try await $0.configureDefaultMessage(
                productId: "com.example.product", locale: "en-US",
                request: DefaultConfigurationRequest(messageIdentifier: Self.imageId))
        }
        #expect(configured.method == "PUT")
        #expect(configured.path == "/inApps/v1/messaging/default/com.example.product/en-US")
        #expect(UUID(uuidString: configured.bodyJSON?["messageIdentifier"] as? String ?? "") == Self.imageId)

        let (fetched, response) = try await exchange(try .corpus("getDefaultMessageResponse.json")) {
            try await $0.getDefaultMessage(productId: "com.example.product", locale: "en-US")
        }
        #expect(fetched.method == "GET")
        #expect(fetched.path == "/inApps/v1/messaging/default/com.example.product/en-US")
        #expect(response.messageIdentifier != nil)

        let (deleted, _) = try await exchange(.empty()) {
            try await $0.deleteDefaultMessage(productId: "com.example.product", locale: "en-US")
        }
        #expect(deleted.method == "DELETE")
        #expect(deleted.path == "/inApps/v1/messaging/default/com.example.product/en-US")
    }

    @Test func realtimeURLConfigureGetDelete() async throws {
        let (configured, _) = try await exchange(.empty()) {
            try await $0.configureRealtimeURL(request: RealtimeUrlRequest(realtimeURL: "https://example.com/realtime"))
        }
        #expect(configured.method == "PUT")
        #expect(configured.path == "/inApps/v1/messaging/realtime/url")
        #expect(try canonical(configured.body) == canonical(#"{"realtimeURL":"https://example.com/realtime"}"#))

        let (fetched, response) = try await exchange(try .corpus("getRealtimeUrlResponse.json")) {
            try await $0.getRealtimeURL()
        }
        #expect(fetched.method == "GET")
        #expect(fetched.path == "/inApps/v1/messaging/realtime/url")
        #expect(response.realtimeURL != nil)

        let (deleted, _) = try await exchange(.empty()) { try await $0.deleteRealtimeURL() }
        #expect(deleted.method == "DELETE")
        #expect(deleted.path == "/inApps/v1/messaging/realtime/url")
    }

    @Test func performanceTestInitiateAndResults() async throws {
        let (started, response) = try await exchange(try .corpus("performanceTestResponse.json")) {
            try await $0.initiatePerformanceTest(originalTransactionId: "70000500092808")
        }
        #expect(started.method == "POST")
        #expect(started.path == "/inApps/v1/messaging/performanceTest")
        #expect(try canonical(started.body) == canonical(#"{"originalTransactionId":"70000500092808"}"#))
        let requestId = try #require(response.requestId)

        let (fetched, result) = try await exchange(try .corpus("performanceTestResultResponse.json")) {
            try await $0.getPerformanceTestResults(requestId: requestId)
        }
        #expect(fetched.method == "GET")
        #expect(fetched.path == "/inApps/v1/messaging/performanceTest/result/\(requestId)")
        #expect(result.responseTimes != nil)
    }

    @Test func pathParametersCannotAddSegmentsOrQueries() async throws {
        let (request, _) = try await exchange(try .corpus("transactionInfoResponse.json")) {
            try await $0.getTransactionInfo(transactionId: "12/../34?x=1")
        }
        #expect(request.path == "/inApps/v1/transactions/12%2F..%2F34%3Fx%3D1")
        #expect(request.query == nil)
    }

    @Test func endpointTableMatchesApple() {
        #expect(AppStoreServerAPIEndpoint.allCases.count == 31)
        let unsafe = Set(AppStoreServerAPIEndpoint.allCases.filter { $0.retrySafety == .notIdempotent })
        #expect(
            unsafe == [
                .requestTestNotification, .extendSubscriptionRenewalDate, .extendRenewalDateForAllActiveSubscribers,
                .finishTransaction, .uploadImage, .uploadMessage, .initiatePerformanceTest,
            ])
        for endpoint in AppStoreServerAPIEndpoint.allCases where endpoint.method == "GET" {
            #expect(endpoint.retrySafety == .idempotent)
        }
    }
}
