import AppStoreClient
import Foundation
import GooglePlayModels
import GooglePlayTrust

/// A client of the Google Play Developer API (`androidpublisher` v3) for the purchase methods
/// Storekeeper uses, at a configurable base URL (Google's, or the Play simulator's).
///
/// Paths are those of the discovery document
/// (`androidpublisher/v3/applications/{packageName}/purchases/…`), each path parameter
/// percent-encoded as one segment. Calls carry an access token from `AccessTokenProvider`
/// (refreshed once on a 401), are retried with backoff and jitter on 429, 5xx and transport
/// failures (bounded attempts, `Retry-After` honoured), and read at most
/// `maximumResponseBytes`. Google's errors come back as `GooglePlayClientError` with the HTTP
/// code, Google's status and message.
/// - Note: Immutable; `Sendable`; safe to call from many tasks.
public struct PlayDeveloperAPIClient: Sendable {
    public static let googleBaseURL = URL(string: "https://androidpublisher.googleapis.com/")!
    /// A subscription or product purchase is a few KiB; a page of voided purchases tens of KiB.
    public static let defaultMaximumResponseBytes = 1 << 20

    public let baseURL: URL
    public let tokens: AccessTokenProvider
    private let loop: GoogleRetryLoop

    public init(
        baseURL: URL = googleBaseURL, tokens: AccessTokenProvider, transport: any HTTPTransport = URLSessionTransport(),
        retryPolicy: RetryPolicy = RetryPolicy(), clock: any RetryClock = SystemRetryClock(),
        maximumResponseBytes: Int = defaultMaximumResponseBytes
    ) {
        self.baseURL = baseURL
        self.tokens = tokens
        self.loop = GoogleRetryLoop(
            transport: transport, policy: retryPolicy, clock: clock, maximumResponseBytes: maximumResponseBytes)
    }

    /// `purchases.subscriptionsv2.get`.
    public func subscriptionV2(packageName: String, token: String) async throws(GooglePlayClientError)
        -> SubscriptionPurchaseV2
    {
        try await subscriptionV2Answer(packageName: packageName, token: token).value
    }

    /// `purchases.subscriptionsv2.get`, with the body exactly as Google sent it (kept verbatim as a fact).
    public func subscriptionV2Answer(packageName: String, token: String) async throws(GooglePlayClientError)
        -> PlayAPIAnswer<SubscriptionPurchaseV2>
    {
        try await call(
            "purchases.subscriptionsv2.get", "GET",
            path: try path(packageName, "purchases", "subscriptionsv2", "tokens", .parameter(token)),
            decode: SubscriptionPurchaseV2.self)
    }

    /// `purchases.subscriptions.acknowledge` (the v1 path: acknowledgement has no v2 method).
    public func acknowledgeSubscription(
        packageName: String, subscriptionId: String, token: String,
        request: SubscriptionPurchasesAcknowledgeRequest = SubscriptionPurchasesAcknowledgeRequest()
    ) async throws(GooglePlayClientError) {
        try await callWithoutBody(
            "purchases.subscriptions.acknowledge",
            path: try path(
                packageName, "purchases", "subscriptions", .parameter(subscriptionId), "tokens", .parameter(token),
                action: "acknowledge"),
            body: GooglePlayJSON.encode(request), idempotent: true)
    }

    /// `purchases.products.get`.
    public func product(packageName: String, productId: String, token: String) async throws(GooglePlayClientError)
        -> ProductPurchase
    {
        try await productAnswer(packageName: packageName, productId: productId, token: token).value
    }

    /// `purchases.products.get`, with the body exactly as Google sent it.
    public func productAnswer(packageName: String, productId: String, token: String)
        async throws(GooglePlayClientError) -> PlayAPIAnswer<ProductPurchase>
    {
        try await call(
            "purchases.products.get", "GET",
            path: try path(packageName, "purchases", "products", .parameter(productId), "tokens", .parameter(token)),
            decode: ProductPurchase.self)
    }

    /// `purchases.products.acknowledge`.
    public func acknowledgeProduct(
        packageName: String, productId: String, token: String,
        request: ProductPurchasesAcknowledgeRequest = ProductPurchasesAcknowledgeRequest()
    ) async throws(GooglePlayClientError) {
        try await callWithoutBody(
            "purchases.products.acknowledge",
            path: try path(
                packageName, "purchases", "products", .parameter(productId), "tokens", .parameter(token),
                action: "acknowledge"),
            body: GooglePlayJSON.encode(request), idempotent: true)
    }

    /// `purchases.products.consume`. Not idempotent at the transport level: a timed-out consume
    /// is not repeated (a second one of a consumed purchase is an error), only one that never left.
    public func consumeProduct(packageName: String, productId: String, token: String)
        async throws(GooglePlayClientError)
    {
        try await callWithoutBody(
            "purchases.products.consume",
            path: try path(
                packageName, "purchases", "products", .parameter(productId), "tokens", .parameter(token),
                action: "consume"),
            body: nil, idempotent: false)
    }

    /// `purchases.voidedpurchases.list`: one page.
    public func voidedPurchases(packageName: String, query: VoidedPurchasesQuery)
        async throws(GooglePlayClientError) -> VoidedPurchasesListResponse
    {
        var url = try path(packageName, "purchases", "voidedpurchases")
        url += query.queryString
        return try await call(
            "purchases.voidedpurchases.list", "GET", path: url, decode: VoidedPurchasesListResponse.self
        ).value
    }

    /// Every page of `purchases.voidedpurchases.list` from `query`, following `nextPageToken`, at
    /// most `maximumPages` pages (a token that repeats is `malformedResponse`, not a loop).
    public func allVoidedPurchases(packageName: String, query: VoidedPurchasesQuery, maximumPages: Int = 100)
        async throws(GooglePlayClientError) -> [VoidedPurchase]
    {
        var purchases: [VoidedPurchase] = []
        var query = query
        var seenTokens: Set<String> = []
        for _ in 0..<max(1, maximumPages) {
            let page = try await voidedPurchases(packageName: packageName, query: query)
            purchases += page.voidedPurchases ?? []
            guard let next = page.tokenPagination?.nextPageToken, !next.isEmpty else { return purchases }
            guard seenTokens.insert(next).inserted else {
                throw GooglePlayClientError(
                    .malformedResponse, "voided purchases paging repeats a page token",
                    method: "purchases.voidedpurchases.list")
            }
            query.token = next
        }
        throw GooglePlayClientError(
            .malformedResponse, "voided purchases span more than \(maximumPages) pages",
            method: "purchases.voidedpurchases.list")
    }

    /// `orders.get`: one order with its price, tax and the developer's revenue.
    public func order(packageName: String, orderId: String) async throws(GooglePlayClientError) -> Order {
        try await orderAnswer(packageName: packageName, orderId: orderId).value
    }

    /// `orders.get`, with the body exactly as Google sent it (kept verbatim beside the fact).
    public func orderAnswer(packageName: String, orderId: String) async throws(GooglePlayClientError)
        -> PlayAPIAnswer<Order>
    {
        try await call(
            "orders.get", "GET", path: try path(packageName, "orders", .parameter(orderId)), decode: Order.self)
    }

    /// The most order ids one `orders.batchget` takes.
    public static let maximumBatchOrderIds = 1000

    /// `orders.batchget`: 1 to 1000 distinct order ids in one call. Google fails the whole call
    /// when one of them is unknown, so callers that cannot tell use `order` one by one.
    public func orders(packageName: String, orderIds: [String]) async throws(GooglePlayClientError) -> [Order] {
        guard !orderIds.isEmpty, orderIds.count <= Self.maximumBatchOrderIds else {
            throw GooglePlayClientError(
                .invalidRequest, "orders.batchget takes 1 to \(Self.maximumBatchOrderIds) order ids",
                method: "orders.batchget")
        }
        guard Set(orderIds).count == orderIds.count else {
            throw GooglePlayClientError(
                .invalidRequest, "orders.batchget order ids must be distinct", method: "orders.batchget")
        }
        var query: [String] = []
        for orderId in orderIds {
            // Each id is bounded as a path parameter would be.
            query.append("orderIds=" + (try Self.encodeSegment(orderId, name: "orderIds")))
        }
        let url = try path(packageName, "orders", action: "batchGet") + "?" + query.joined(separator: "&")
        return try await call("orders.batchget", "GET", path: url, decode: BatchGetOrdersResponse.self).value.orders
            ?? []
    }

    // MARK: - Requests

    enum Segment: ExpressibleByStringLiteral {
        case literal(String)
        case parameter(String)
        init(stringLiteral value: String) { self = .literal(value) }
    }

    /// `androidpublisher/v3/applications/{packageName}/…[:action]`, each parameter one encoded segment.
    func path(_ packageName: String, _ segments: Segment..., action: String? = nil) throws(GooglePlayClientError)
        -> String
    {
        var parts = [
            "androidpublisher", "v3", "applications", try Self.encodeSegment(packageName, name: "packageName"),
        ]
        for segment in segments {
            switch segment {
            case .literal(let text): parts.append(text)
            case .parameter(let value): parts.append(try Self.encodeSegment(value, name: "path parameter"))
            }
        }
        return parts.joined(separator: "/") + (action.map { ":" + $0 } ?? "")
    }

    /// Purchase tokens are about 150 characters; 1000 bounds what is sent. `.` and `..` are
    /// refused: they are unreserved characters, so they go out as they are, and a URL resolver
    /// (ours, a proxy's, Google's front end) reads them as "this" and "the parent" segment,
    /// sending the call to another resource than the one named.
    static func encodeSegment(_ value: String, name: String) throws(GooglePlayClientError) -> String {
        guard !value.isEmpty, value.utf8.count <= 1000 else {
            throw GooglePlayClientError(.invalidRequest, "\(name) is empty or longer than 1000 bytes")
        }
        guard value != ".", value != ".." else {
            throw GooglePlayClientError(.invalidRequest, "\(name) must not be \".\" or \"..\"")
        }
        return FormEncoding.encode(value)
    }

    private func call<T: Decodable & Sendable>(_ method: String, _ httpMethod: String, path: String, decode: T.Type)
        async throws(GooglePlayClientError) -> PlayAPIAnswer<T>
    {
        try await send(method, httpMethod, path: path, body: nil, idempotent: true) { response in
            do {
                return .success(
                    PlayAPIAnswer(value: try JSONDecoder().decode(T.self, from: response.body), body: response.body))
            } catch {
                let reason =
                    (error as? DecodingError).map { GooglePlayJSON.describe($0, type: String(describing: T.self)) }
                return .fail(
                    GooglePlayClientError(
                        .malformedResponse,
                        "the answer is not a \(T.self)" + (reason.map { ": \($0.description)" } ?? ""),
                        httpStatus: response.status, method: method))
            }
        }
    }

    private func callWithoutBody(_ method: String, path: String, body: Data?, idempotent: Bool)
        async throws(GooglePlayClientError)
    {
        try await send(method, "POST", path: path, body: body, idempotent: idempotent) { _ in .success(()) }
    }

    private func send<Value: Sendable>(
        _ method: String, _ httpMethod: String, path: String, body: Data?, idempotent: Bool,
        decode: @escaping (HTTPTransportResponse) -> GoogleAttemptVerdict<Value>
    ) async throws(GooglePlayClientError) -> Value {
        guard let url = URL(string: path, relativeTo: baseURL)?.absoluteURL else {
            throw GooglePlayClientError(.invalidRequest, "cannot form the request URL", method: method)
        }
        let tokens = self.tokens
        let clock = loop.clock
        return try await loop.run(
            method: method, idempotent: idempotent,
            makeRequest: { () async throws(GooglePlayClientError) -> HTTPTransportRequest in
                let accessToken = try await tokens.accessToken()
                var headers: [(name: String, value: String)] = [
                    ("Authorization", "Bearer " + accessToken), ("Accept", "application/json"),
                ]
                if body != nil { headers.append(("Content-Type", "application/json")) }
                return HTTPTransportRequest(method: httpMethod, url: url, headers: headers, body: body)
            },
            refreshCredentials: { await tokens.invalidate() },
            verdict: { response in
                guard (200..<300).contains(response.status) else {
                    return GoogleRetryLoop.apiFailure(response, method: method, now: clock.wallNow())
                }
                return decode(response)
            })
    }
}

/// A decoded answer of the Play Developer API and its body exactly as Google sent it.
/// - Note: Immutable value; `Sendable`.
public struct PlayAPIAnswer<Value: Sendable>: Sendable {
    public let value: Value
    public let body: Data
}

/// The query of `purchases.voidedpurchases.list`, parameters named as the discovery document does.
/// - Note: Immutable value; `Sendable`.
public struct VoidedPurchasesQuery: Sendable, Hashable {
    /// Oldest voided time to return (at most 30 days back; ignored with a page `token`).
    public var startTime: EpochMillisString?
    public var endTime: EpochMillisString?
    public var maxResults: UInt32?
    /// 0: in-app products only (Google's default); 1: subscriptions too.
    public var type: Int32?
    public var includeQuantityBasedPartialRefund: Bool?
    /// The page to return, from `tokenPagination.nextPageToken`.
    public var token: String?
    public var startIndex: UInt32?

    public init(
        startTime: EpochMillisString? = nil, endTime: EpochMillisString? = nil, maxResults: UInt32? = nil,
        type: Int32? = 1, includeQuantityBasedPartialRefund: Bool? = true, token: String? = nil,
        startIndex: UInt32? = nil
    ) {
        self.startTime = startTime
        self.endTime = endTime
        self.maxResults = maxResults
        self.type = type
        self.includeQuantityBasedPartialRefund = includeQuantityBasedPartialRefund
        self.token = token
        self.startIndex = startIndex
    }

    /// `?name=value&…` in a fixed order, or "" when empty.
    var queryString: String {
        var items: [(String, String)] = []
        if let endTime { items.append(("endTime", endTime.description)) }
        if let includeQuantityBasedPartialRefund {
            items.append(("includeQuantityBasedPartialRefund", includeQuantityBasedPartialRefund ? "true" : "false"))
        }
        if let maxResults { items.append(("maxResults", String(maxResults))) }
        if let startIndex { items.append(("startIndex", String(startIndex))) }
        if let startTime { items.append(("startTime", startTime.description)) }
        if let token { items.append(("token", token)) }
        if let type { items.append(("type", String(type))) }
        guard !items.isEmpty else { return "" }
        return "?" + items.map { FormEncoding.encode($0.0) + "=" + FormEncoding.encode($0.1) }.joined(separator: "&")
    }
}
