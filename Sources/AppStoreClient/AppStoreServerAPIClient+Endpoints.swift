import AppStoreModels
import Foundation

/// Which Get Transaction History endpoint to call. Apple recommends v2 (v1 omits some
/// transactions Apple added later, such as finished consumables).
public enum TransactionHistoryVersion: String, Sendable, Hashable, CaseIterable {
    case v1
    case v2
}

extension AppStoreServerAPIClient {
    // MARK: Transactions

    /// Get Transaction Info: `GET /inApps/v1/transactions/{transactionId}`.
    public func getTransactionInfo(transactionId: String) async throws(AppStoreClientError) -> TransactionInfoResponse {
        let endpoint = AppStoreServerAPIEndpoint.getTransactionInfo
        let answer = try await perform(Call(endpoint: endpoint, path: try endpoint.path(transactionId)))
        return try Self.decode(TransactionInfoResponse.self, answer, endpoint: endpoint)
    }

    /// One page of Get Transaction History: `GET /inApps/{v1|v2}/history/{transactionId}` with
    /// every filter of `request` and `revision` (nil for the first page). For all pages as
    /// verified transactions use `transactionHistory(…)`.
    public func getTransactionHistory(
        transactionId: String, revision: String?, request: TransactionHistoryRequest = TransactionHistoryRequest(),
        version: TransactionHistoryVersion = .v2
    ) async throws(AppStoreClientError) -> HistoryResponse {
        try await historyPage(
            transactionId: transactionId, revision: revision, request: request, version: version, pinned: nil
        ).response
    }

    func historyPage(
        transactionId: String, revision: String?, request: TransactionHistoryRequest,
        version: TransactionHistoryVersion,
        pinned: AppStoreEnvironment?
    ) async throws(AppStoreClientError) -> (response: HistoryResponse, environment: AppStoreEnvironment) {
        let endpoint: AppStoreServerAPIEndpoint = version == .v1 ? .getTransactionHistoryV1 : .getTransactionHistoryV2
        let call = Call(
            endpoint: endpoint, path: try endpoint.path(transactionId), query: request.queryItems(revision: revision))
        let answer = try await perform(call, pinnedEnvironment: pinned)
        return (try Self.decode(HistoryResponse.self, answer, endpoint: endpoint), answer.environment)
    }

    /// Get All Subscription Statuses: `GET /inApps/v1/subscriptions/{transactionId}`, with one
    /// `status` query item per filter value.
    public func getAllSubscriptionStatuses(transactionId: String, status: [Status]? = nil)
        async throws(AppStoreClientError) -> StatusResponse
    {
        let endpoint = AppStoreServerAPIEndpoint.getAllSubscriptionStatuses
        let query = (status ?? []).map { (name: "status", value: String($0.rawValue)) }
        let answer = try await perform(Call(endpoint: endpoint, path: try endpoint.path(transactionId), query: query))
        return try Self.decode(StatusResponse.self, answer, endpoint: endpoint)
    }

    /// One page of Get Refund History: `GET /inApps/v2/refund/lookup/{transactionId}?revision=…`.
    public func getRefundHistory(transactionId: String, revision: String?) async throws(AppStoreClientError)
        -> RefundHistoryResponse
    {
        try await refundPage(transactionId: transactionId, revision: revision, pinned: nil).response
    }

    func refundPage(transactionId: String, revision: String?, pinned: AppStoreEnvironment?)
        async throws(AppStoreClientError)
        -> (response: RefundHistoryResponse, environment: AppStoreEnvironment)
    {
        let endpoint = AppStoreServerAPIEndpoint.getRefundHistory
        let query = revision.map { [(name: "revision", value: $0)] } ?? []
        let answer = try await perform(
            Call(endpoint: endpoint, path: try endpoint.path(transactionId), query: query), pinnedEnvironment: pinned)
        return (try Self.decode(RefundHistoryResponse.self, answer, endpoint: endpoint), answer.environment)
    }

    /// Look Up Order ID: `GET /inApps/v1/lookup/{orderId}`.
    public func lookUpOrderId(orderId: String) async throws(AppStoreClientError) -> OrderLookupResponse {
        let endpoint = AppStoreServerAPIEndpoint.lookUpOrderId
        let answer = try await perform(Call(endpoint: endpoint, path: try endpoint.path(orderId)))
        return try Self.decode(OrderLookupResponse.self, answer, endpoint: endpoint)
    }

    /// Get App Transaction Info: `GET /inApps/v1/transactions/appTransactions/{transactionId}`
    /// (any transaction, original transaction or app transaction ID of the customer).
    public func getAppTransactionInfo(transactionId: String) async throws(AppStoreClientError)
        -> AppTransactionInfoResponse
    {
        let endpoint = AppStoreServerAPIEndpoint.getAppTransactionInfo
        let answer = try await perform(Call(endpoint: endpoint, path: try endpoint.path(transactionId)))
        return try Self.decode(AppTransactionInfoResponse.self, answer, endpoint: endpoint)
    }

    /// Finish Transaction: `POST /inApps/v1/transactions/{transactionId}/finish`, no body.
    public func finishTransaction(transactionId: String) async throws(AppStoreClientError) {
        let endpoint = AppStoreServerAPIEndpoint.finishTransaction
        _ = try await perform(Call(endpoint: endpoint, path: try endpoint.path(transactionId)))
    }

    /// Set App Account Token: `PUT /inApps/v1/transactions/{originalTransactionId}/appAccountToken`.
    public func setAppAccountToken(originalTransactionId: String, request: UpdateAppAccountTokenRequest)
        async throws(AppStoreClientError)
    {
        let endpoint = AppStoreServerAPIEndpoint.setAppAccountToken
        _ = try await perform(
            Call(
                endpoint: endpoint, path: try endpoint.path(originalTransactionId), body: Self.json(request),
                contentType: "application/json"))
    }

    /// Send Consumption Information V1 (deprecated by Apple):
    /// `PUT /inApps/v1/transactions/consumption/{transactionId}`.
    public func sendConsumptionInformationV1(transactionId: String, request: ConsumptionRequestV1)
        async throws(AppStoreClientError)
    {
        let endpoint = AppStoreServerAPIEndpoint.sendConsumptionInformationV1
        _ = try await perform(
            Call(
                endpoint: endpoint, path: try endpoint.path(transactionId), body: Self.json(request),
                contentType: "application/json"))
    }

    /// Send Consumption Information: `PUT /inApps/v2/transactions/consumption/{transactionId}`.
    public func sendConsumptionInformation(transactionId: String, request: ConsumptionRequest)
        async throws(AppStoreClientError)
    {
        let endpoint = AppStoreServerAPIEndpoint.sendConsumptionInformation
        _ = try await perform(
            Call(
                endpoint: endpoint, path: try endpoint.path(transactionId), body: Self.json(request),
                contentType: "application/json"))
    }

    // MARK: Subscription renewal date extensions

    /// Extend a Subscription Renewal Date: `PUT /inApps/v1/subscriptions/extend/{originalTransactionId}`.
    /// Not retried blindly (see `AppStoreServerAPIEndpoint`).
    public func extendSubscriptionRenewalDate(originalTransactionId: String, request: ExtendRenewalDateRequest)
        async throws(AppStoreClientError) -> ExtendRenewalDateResponse
    {
        let endpoint = AppStoreServerAPIEndpoint.extendSubscriptionRenewalDate
        let answer = try await perform(
            Call(
                endpoint: endpoint, path: try endpoint.path(originalTransactionId), body: Self.json(request),
                contentType: "application/json"))
        return try Self.decode(ExtendRenewalDateResponse.self, answer, endpoint: endpoint)
    }

    /// Extend Subscription Renewal Dates for All Active Subscribers:
    /// `POST /inApps/v1/subscriptions/extend/mass`. Not retried blindly.
    public func extendRenewalDateForAllActiveSubscribers(request: MassExtendRenewalDateRequest)
        async throws(AppStoreClientError) -> MassExtendRenewalDateResponse
    {
        let endpoint = AppStoreServerAPIEndpoint.extendRenewalDateForAllActiveSubscribers
        let answer = try await perform(
            Call(
                endpoint: endpoint, path: try endpoint.path(), body: Self.json(request), contentType: "application/json"
            ))
        return try Self.decode(MassExtendRenewalDateResponse.self, answer, endpoint: endpoint)
    }

    /// Get Status of Subscription Renewal Date Extensions:
    /// `GET /inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}`.
    public func getStatusOfSubscriptionRenewalDateExtensions(productId: String, requestIdentifier: String)
        async throws(AppStoreClientError) -> MassExtendRenewalDateStatusResponse
    {
        let endpoint = AppStoreServerAPIEndpoint.getStatusOfSubscriptionRenewalDateExtensions
        let answer = try await perform(Call(endpoint: endpoint, path: try endpoint.path(productId, requestIdentifier)))
        return try Self.decode(MassExtendRenewalDateStatusResponse.self, answer, endpoint: endpoint)
    }

    // MARK: Notifications

    /// One page of Get Notification History: `POST /inApps/v1/notifications/history` with the
    /// filters as the JSON body (dates as whole milliseconds) and `paginationToken` in the query.
    public func getNotificationHistory(paginationToken: String?, request: NotificationHistoryRequest)
        async throws(AppStoreClientError) -> NotificationHistoryResponse
    {
        let endpoint = AppStoreServerAPIEndpoint.getNotificationHistory
        let query = paginationToken.map { [(name: "paginationToken", value: $0)] } ?? []
        let answer = try await perform(
            Call(
                endpoint: endpoint, path: try endpoint.path(), query: query, body: Self.json(request),
                contentType: "application/json"))
        return try Self.decode(NotificationHistoryResponse.self, answer, endpoint: endpoint)
    }

    /// Request a Test Notification: `POST /inApps/v1/notifications/test`, no body. Not retried
    /// blindly (a repeat sends a second notification).
    public func requestTestNotification() async throws(AppStoreClientError) -> SendTestNotificationResponse {
        let endpoint = AppStoreServerAPIEndpoint.requestTestNotification
        let answer = try await perform(Call(endpoint: endpoint, path: try endpoint.path()))
        return try Self.decode(SendTestNotificationResponse.self, answer, endpoint: endpoint)
    }

    /// Get Test Notification Status: `GET /inApps/v1/notifications/test/{testNotificationToken}`.
    public func getTestNotificationStatus(testNotificationToken: String) async throws(AppStoreClientError)
        -> CheckTestNotificationResponse
    {
        let endpoint = AppStoreServerAPIEndpoint.getTestNotificationStatus
        let answer = try await perform(Call(endpoint: endpoint, path: try endpoint.path(testNotificationToken)))
        return try Self.decode(CheckTestNotificationResponse.self, answer, endpoint: endpoint)
    }

    // MARK: Retention messaging

    /// Upload Image: `PUT /inApps/v1/messaging/image/{imageIdentifier}[?imageSize=…]`, body the
    /// PNG bytes (`Content-Type: image/png`). Identifiers go out lower-case, as Apple requires.
    public func uploadImage(imageIdentifier: UUID, png: Data, imageSize: ImageSize? = nil)
        async throws(AppStoreClientError)
    {
        let endpoint = AppStoreServerAPIEndpoint.uploadImage
        let query = imageSize.map { [(name: "imageSize", value: $0.rawValue)] } ?? []
        _ = try await perform(
            Call(
                endpoint: endpoint, path: try endpoint.path(imageIdentifier.uuidString.lowercased()), query: query,
                body: png,
                contentType: "image/png"))
    }

    /// Delete Image: `DELETE /inApps/v1/messaging/image/{imageIdentifier}`.
    public func deleteImage(imageIdentifier: UUID) async throws(AppStoreClientError) {
        let endpoint = AppStoreServerAPIEndpoint.deleteImage
        _ = try await perform(
            Call(endpoint: endpoint, path: try endpoint.path(imageIdentifier.uuidString.lowercased())))
    }

    /// Get Image List: `GET /inApps/v1/messaging/image/list`.
    public func getImageList() async throws(AppStoreClientError) -> GetImageListResponse {
        let endpoint = AppStoreServerAPIEndpoint.getImageList
        return try Self.decode(
            GetImageListResponse.self, try await perform(Call(endpoint: endpoint, path: try endpoint.path())),
            endpoint: endpoint)
    }

    /// Upload Message: `PUT /inApps/v1/messaging/message/{messageIdentifier}`. Not retried blindly.
    public func uploadMessage(messageIdentifier: UUID, request: UploadMessageRequestBody)
        async throws(AppStoreClientError)
    {
        let endpoint = AppStoreServerAPIEndpoint.uploadMessage
        _ = try await perform(
            Call(
                endpoint: endpoint, path: try endpoint.path(messageIdentifier.uuidString.lowercased()),
                body: Self.json(request),
                contentType: "application/json"))
    }

    /// Delete Message: `DELETE /inApps/v1/messaging/message/{messageIdentifier}`.
    public func deleteMessage(messageIdentifier: UUID) async throws(AppStoreClientError) {
        let endpoint = AppStoreServerAPIEndpoint.deleteMessage
        _ = try await perform(
            Call(endpoint: endpoint, path: try endpoint.path(messageIdentifier.uuidString.lowercased())))
    }

    /// Get Message List: `GET /inApps/v1/messaging/message/list`.
    public func getMessageList() async throws(AppStoreClientError) -> GetMessageListResponse {
        let endpoint = AppStoreServerAPIEndpoint.getMessageList
        return try Self.decode(
            GetMessageListResponse.self, try await perform(Call(endpoint: endpoint, path: try endpoint.path())),
            endpoint: endpoint)
    }

    /// Configure Default Message: `PUT /inApps/v1/messaging/default/{productId}/{locale}`.
    public func configureDefaultMessage(productId: String, locale: String, request: DefaultConfigurationRequest)
        async throws(AppStoreClientError)
    {
        let endpoint = AppStoreServerAPIEndpoint.configureDefaultMessage
        _ = try await perform(
            Call(
                endpoint: endpoint, path: try endpoint.path(productId, locale), body: Self.json(request),
                contentType: "application/json"))
    }

    /// Delete Default Message: `DELETE /inApps/v1/messaging/default/{productId}/{locale}`.
    public func deleteDefaultMessage(productId: String, locale: String) async throws(AppStoreClientError) {
        let endpoint = AppStoreServerAPIEndpoint.deleteDefaultMessage
        _ = try await perform(Call(endpoint: endpoint, path: try endpoint.path(productId, locale)))
    }

    /// Get Default Message: `GET /inApps/v1/messaging/default/{productId}/{locale}`.
    public func getDefaultMessage(productId: String, locale: String) async throws(AppStoreClientError)
        -> DefaultConfigurationResponse
    {
        let endpoint = AppStoreServerAPIEndpoint.getDefaultMessage
        let answer = try await perform(Call(endpoint: endpoint, path: try endpoint.path(productId, locale)))
        return try Self.decode(DefaultConfigurationResponse.self, answer, endpoint: endpoint)
    }

    /// Configure Realtime URL: `PUT /inApps/v1/messaging/realtime/url`.
    public func configureRealtimeURL(request: RealtimeUrlRequest) async throws(AppStoreClientError) {
        let endpoint = AppStoreServerAPIEndpoint.configureRealtimeURL
        _ = try await perform(
            Call(
                endpoint: endpoint, path: try endpoint.path(), body: Self.json(request), contentType: "application/json"
            ))
    }

    /// Delete Realtime URL: `DELETE /inApps/v1/messaging/realtime/url`.
    public func deleteRealtimeURL() async throws(AppStoreClientError) {
        let endpoint = AppStoreServerAPIEndpoint.deleteRealtimeURL
        _ = try await perform(Call(endpoint: endpoint, path: try endpoint.path()))
    }

    /// Get Realtime URL: `GET /inApps/v1/messaging/realtime/url`.
    public func getRealtimeURL() async throws(AppStoreClientError) -> RealtimeUrlResponse {
        let endpoint = AppStoreServerAPIEndpoint.getRealtimeURL
        return try Self.decode(
            RealtimeUrlResponse.self, try await perform(Call(endpoint: endpoint, path: try endpoint.path())),
            endpoint: endpoint)
    }

    /// Initiate Performance Test (sandbox): `POST /inApps/v1/messaging/performanceTest` with
    /// `{"originalTransactionId": …}`. Not retried blindly (a repeat starts another test).
    public func initiatePerformanceTest(originalTransactionId: String) async throws(AppStoreClientError)
        -> PerformanceTestResponse
    {
        let endpoint = AppStoreServerAPIEndpoint.initiatePerformanceTest
        let body = Self.json(PerformanceTestRequest(originalTransactionId: originalTransactionId))
        let answer = try await perform(
            Call(endpoint: endpoint, path: try endpoint.path(), body: body, contentType: "application/json"))
        return try Self.decode(PerformanceTestResponse.self, answer, endpoint: endpoint)
    }

    /// Get Performance Test Results: `GET /inApps/v1/messaging/performanceTest/result/{requestId}`.
    public func getPerformanceTestResults(requestId: String) async throws(AppStoreClientError)
        -> PerformanceTestResultResponse
    {
        let endpoint = AppStoreServerAPIEndpoint.getPerformanceTestResults
        let answer = try await perform(Call(endpoint: endpoint, path: try endpoint.path(requestId)))
        return try Self.decode(PerformanceTestResultResponse.self, answer, endpoint: endpoint)
    }
}
