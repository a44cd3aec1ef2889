import AppStoreModels
import AppStoreTrust

/// One page of a paginated App Store answer, before verification.
struct UnverifiedPage<Item: Sendable>: Sendable {
    var items: [Item]
    /// The token for the next page (`revision` or `paginationToken`).
    var nextToken: String?
    var hasMore: Bool
    var environment: AppStoreEnvironment
}

/// The items of a paginated App Store endpoint, page after page, each verified by the trust
/// core before it is handed out.
///
/// Pages are fetched lazily, one at a time, with the same filters; later pages go to the
/// environment that answered the first (a revision token belongs to one environment). Iteration
/// ends when Apple says `hasMore: false`, and fails with `malformedResponse` when Apple says more
/// but gives no new token (it would otherwise loop forever). Errors thrown are
/// `AppStoreClientError`: a request failure, or `signedDataRejected` for an item that fails
/// verification.
/// - Note: The sequence is an immutable `Sendable` value; each iterator belongs to one task.
public struct VerifiedPageSequence<Item: Sendable, Element: Sendable>: AsyncSequence, Sendable {
    typealias Fetch =
        @Sendable (_ token: String?, _ pinned: AppStoreEnvironment?) async throws(AppStoreClientError) ->
        UnverifiedPage<Item>
    typealias Verify =
        @Sendable (_ item: Item, _ environment: AppStoreEnvironment) throws(AppStoreClientError) -> Element

    let fetch: Fetch
    let verify: Verify

    public func makeAsyncIterator() -> Iterator { Iterator(fetch: fetch, verify: verify) }

    /// Hands out one verified item at a time, fetching the next page when the current one is used up.
    public struct Iterator: AsyncIteratorProtocol {
        let fetch: Fetch
        let verify: Verify
        private var buffer: [Item] = []
        private var index = 0
        private var token: String?
        private var environment: AppStoreEnvironment?
        private var started = false
        private var finished = false
        /// Pages fetched so far.
        public private(set) var pageCount = 0

        init(fetch: @escaping Fetch, verify: @escaping Verify) {
            self.fetch = fetch
            self.verify = verify
        }

        public mutating func next() async throws -> Element? {
            while index >= buffer.count {
                guard !finished else { return nil }
                let page = try await fetch(started ? token : nil, environment)
                pageCount += 1
                if started, page.hasMore, page.nextToken == token {
                    finished = true
                    throw AppStoreClientError(
                        .malformedResponse,
                        "pagination did not advance: Apple returned the same token with hasMore true",
                        environment: page.environment)
                }
                if page.hasMore, page.nextToken == nil {
                    finished = true
                    throw AppStoreClientError(
                        .malformedResponse, "Apple said hasMore without a token for the next page",
                        environment: page.environment)
                }
                started = true
                environment = page.environment
                token = page.nextToken
                finished = !page.hasMore
                buffer = page.items
                index = 0
            }
            let item = buffer[index]
            index += 1
            return try verify(item, environment ?? .production)
        }
    }
}

/// A verified transaction of Get Transaction History or Get Refund History.
public typealias VerifiedTransactionSequence = VerifiedPageSequence<String, Verified<JWSTransactionDecodedPayload>>

/// A notification from Get Notification History, verified, with Apple's delivery attempts.
/// - Note: Immutable value; `Sendable`.
public struct NotificationHistoryEntry: Sendable {
    public let notification: Verified<ResponseBodyV2DecodedPayload>
    public let sendAttempts: [SendAttemptItem]
}

public typealias VerifiedNotificationHistorySequence = VerifiedPageSequence<
    NotificationHistoryResponseItem, NotificationHistoryEntry
>

extension AppStoreServerAPIClient {
    /// Every transaction of the customer's history matching `request`, verified by `verifier`
    /// (or `sandboxVerifier` for pages the sandbox fallback answered).
    public func transactionHistory(
        transactionId: String, request: TransactionHistoryRequest = TransactionHistoryRequest(),
        version: TransactionHistoryVersion = .v2, verifier: SignedDataVerifier,
        sandboxVerifier: SignedDataVerifier? = nil
    ) -> VerifiedTransactionSequence {
        VerifiedPageSequence(
            fetch: { [self] token, pinned throws(AppStoreClientError) in
                let (response, environment) = try await historyPage(
                    transactionId: transactionId, revision: token, request: request, version: version, pinned: pinned)
                return UnverifiedPage(
                    items: response.signedTransactions ?? [], nextToken: response.revision,
                    hasMore: response.hasMore ?? false, environment: environment)
            },
            verify: Self.transactionVerifier(
                primary: verifier, sandbox: sandboxVerifier, endpoint: .getTransactionHistoryV2))
    }

    /// Every refunded or revoked transaction of the customer, verified.
    public func refundHistory(
        transactionId: String, verifier: SignedDataVerifier, sandboxVerifier: SignedDataVerifier? = nil
    ) -> VerifiedTransactionSequence {
        VerifiedPageSequence(
            fetch: { [self] token, pinned throws(AppStoreClientError) in
                let (response, environment) = try await refundPage(
                    transactionId: transactionId, revision: token, pinned: pinned)
                return UnverifiedPage(
                    items: response.signedTransactions ?? [], nextToken: response.revision,
                    hasMore: response.hasMore ?? false, environment: environment)
            },
            verify: Self.transactionVerifier(primary: verifier, sandbox: sandboxVerifier, endpoint: .getRefundHistory))
    }

    /// Every notification Apple sent (or tried to send) in the request's range, verified.
    public func notificationHistory(request: NotificationHistoryRequest, verifier: SignedDataVerifier)
        -> VerifiedNotificationHistorySequence
    {
        VerifiedPageSequence(
            fetch: { [self] token, _ throws(AppStoreClientError) in
                let response = try await getNotificationHistory(paginationToken: token, request: request)
                return UnverifiedPage(
                    items: response.notificationHistory ?? [], nextToken: response.paginationToken,
                    hasMore: response.hasMore ?? false, environment: configuration.environment)
            },
            verify: { item, environment throws(AppStoreClientError) in
                guard let signed = item.signedPayload else {
                    throw AppStoreClientError(
                        .malformedResponse, "notification history item without signedPayload",
                        endpoint: AppStoreServerAPIEndpoint.getNotificationHistory.rawValue, environment: environment)
                }
                do throws(TrustError) {
                    return NotificationHistoryEntry(
                        notification: try verifier.verifyAndDecodeNotification(signed),
                        sendAttempts: item.sendAttempts ?? [])
                } catch {
                    throw AppStoreClientError(
                        .signedDataRejected, "notification failed verification: \(error.rule.rawValue)",
                        endpoint: AppStoreServerAPIEndpoint.getNotificationHistory.rawValue, environment: environment)
                }
            })
    }

    private static func transactionVerifier(
        primary: SignedDataVerifier, sandbox: SignedDataVerifier?, endpoint: AppStoreServerAPIEndpoint
    ) -> VerifiedTransactionSequence.Verify {
        { signed, environment throws(AppStoreClientError) in
            let verifier: SignedDataVerifier
            if environment == .sandbox, primary.environment != .sandbox {
                guard let sandbox else {
                    throw AppStoreClientError(
                        .signedDataRejected, "the sandbox fallback answered but no sandbox verifier was given",
                        endpoint: endpoint.rawValue, environment: environment)
                }
                verifier = sandbox
            } else {
                verifier = primary
            }
            do throws(TrustError) {
                return try verifier.verifyAndDecodeTransaction(signed)
            } catch {
                throw AppStoreClientError(
                    .signedDataRejected, "transaction failed verification: \(error.rule.rawValue)",
                    endpoint: endpoint.rawValue, environment: environment)
            }
        }
    }
}
