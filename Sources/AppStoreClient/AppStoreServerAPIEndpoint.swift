import Foundation

/// Every App Store Server API (and Retention Messaging API) endpoint this client calls, with
/// Apple's method and path and whether it is safe to retry blindly.
///
/// Retry safety, per endpoint (see `RetrySafety`):
/// - idempotent: every `GET`; Get Notification History (a `POST` that only reads);
///   Send Consumption Information v1/v2 and Set App Account Token (`PUT` of a whole value);
///   Configure/Delete Default Message, Configure/Delete Realtime URL, Delete Image, Delete
///   Message (set or remove one resource; a repeated `DELETE` may answer 404).
/// - not idempotent: Request a Test Notification (sends another one), Extend a Subscription
///   Renewal Date and Extend for All Active Subscribers (Apple documents `requestIdentifier`
///   for tracking, not as an idempotency key), Finish Transaction (Apple documents no
///   idempotency), Upload Image and Upload Message (Apple: not idempotent; a repeat answers
///   "already exists"), Initiate Performance Test (starts another test).
///
/// Sandbox fallback applies to the lookups keyed by a customer's transaction ID, where a
/// sandbox purchase is unknown to production.
public enum AppStoreServerAPIEndpoint: String, Sendable, Hashable, CaseIterable {
    case getTransactionInfo
    case getTransactionHistoryV1
    case getTransactionHistoryV2
    case getAllSubscriptionStatuses
    case getRefundHistory
    case lookUpOrderId
    case getAppTransactionInfo
    case finishTransaction
    case setAppAccountToken
    case sendConsumptionInformationV1
    case sendConsumptionInformation
    case extendSubscriptionRenewalDate
    case extendRenewalDateForAllActiveSubscribers
    case getStatusOfSubscriptionRenewalDateExtensions
    case getNotificationHistory
    case requestTestNotification
    case getTestNotificationStatus
    case uploadImage
    case deleteImage
    case getImageList
    case uploadMessage
    case deleteMessage
    case getMessageList
    case configureDefaultMessage
    case deleteDefaultMessage
    case getDefaultMessage
    case configureRealtimeURL
    case deleteRealtimeURL
    case getRealtimeURL
    case initiatePerformanceTest
    case getPerformanceTestResults

    /// The HTTP method Apple documents.
    public var method: String {
        switch self {
        case .getTransactionInfo, .getTransactionHistoryV1, .getTransactionHistoryV2, .getAllSubscriptionStatuses,
            .getRefundHistory, .lookUpOrderId, .getAppTransactionInfo, .getStatusOfSubscriptionRenewalDateExtensions,
            .getTestNotificationStatus, .getImageList, .getMessageList, .getDefaultMessage, .getRealtimeURL,
            .getPerformanceTestResults:
            return "GET"
        case .finishTransaction, .extendRenewalDateForAllActiveSubscribers, .getNotificationHistory,
            .requestTestNotification, .initiatePerformanceTest:
            return "POST"
        case .setAppAccountToken, .sendConsumptionInformationV1, .sendConsumptionInformation,
            .extendSubscriptionRenewalDate, .uploadImage, .uploadMessage, .configureDefaultMessage,
            .configureRealtimeURL:
            return "PUT"
        case .deleteImage, .deleteMessage, .deleteDefaultMessage, .deleteRealtimeURL:
            return "DELETE"
        }
    }

    /// Apple's path with `{placeholders}` for the path parameters.
    public var pathTemplate: String {
        switch self {
        case .getTransactionInfo: return "/inApps/v1/transactions/{transactionId}"
        case .getTransactionHistoryV1: return "/inApps/v1/history/{transactionId}"
        case .getTransactionHistoryV2: return "/inApps/v2/history/{transactionId}"
        case .getAllSubscriptionStatuses: return "/inApps/v1/subscriptions/{transactionId}"
        case .getRefundHistory: return "/inApps/v2/refund/lookup/{transactionId}"
        case .lookUpOrderId: return "/inApps/v1/lookup/{orderId}"
        case .getAppTransactionInfo: return "/inApps/v1/transactions/appTransactions/{transactionId}"
        case .finishTransaction: return "/inApps/v1/transactions/{transactionId}/finish"
        case .setAppAccountToken: return "/inApps/v1/transactions/{originalTransactionId}/appAccountToken"
        case .sendConsumptionInformationV1: return "/inApps/v1/transactions/consumption/{transactionId}"
        case .sendConsumptionInformation: return "/inApps/v2/transactions/consumption/{transactionId}"
        case .extendSubscriptionRenewalDate: return "/inApps/v1/subscriptions/extend/{originalTransactionId}"
        case .extendRenewalDateForAllActiveSubscribers: return "/inApps/v1/subscriptions/extend/mass"
        case .getStatusOfSubscriptionRenewalDateExtensions:
            return "/inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}"
        case .getNotificationHistory: return "/inApps/v1/notifications/history"
        case .requestTestNotification: return "/inApps/v1/notifications/test"
        case .getTestNotificationStatus: return "/inApps/v1/notifications/test/{testNotificationToken}"
        case .uploadImage, .deleteImage: return "/inApps/v1/messaging/image/{imageIdentifier}"
        case .getImageList: return "/inApps/v1/messaging/image/list"
        case .uploadMessage, .deleteMessage: return "/inApps/v1/messaging/message/{messageIdentifier}"
        case .getMessageList: return "/inApps/v1/messaging/message/list"
        case .configureDefaultMessage, .deleteDefaultMessage, .getDefaultMessage:
            return "/inApps/v1/messaging/default/{productId}/{locale}"
        case .configureRealtimeURL, .deleteRealtimeURL, .getRealtimeURL: return "/inApps/v1/messaging/realtime/url"
        case .initiatePerformanceTest: return "/inApps/v1/messaging/performanceTest"
        case .getPerformanceTestResults: return "/inApps/v1/messaging/performanceTest/result/{requestId}"
        }
    }

    public var retrySafety: RetrySafety {
        switch self {
        case .requestTestNotification, .extendSubscriptionRenewalDate, .extendRenewalDateForAllActiveSubscribers,
            .finishTransaction, .uploadImage, .uploadMessage, .initiatePerformanceTest:
            return .notIdempotent
        default:
            return .idempotent
        }
    }

    /// Whether a "not found in production" (or a production 401) may be retried on the sandbox.
    public var allowsSandboxFallback: Bool {
        switch self {
        case .getTransactionInfo, .getTransactionHistoryV1, .getTransactionHistoryV2, .getAllSubscriptionStatuses,
            .getRefundHistory, .getAppTransactionInfo:
            return true
        default:
            return false
        }
    }

    /// The concrete path: each placeholder replaced, in order, by a percent-encoded segment
    /// (so an ID can never add a path segment or a query).
    func path(_ parameters: String...) throws(AppStoreClientError) -> String {
        var remaining = parameters[...]
        var segments: [String] = []
        for segment in pathTemplate.split(separator: "/", omittingEmptySubsequences: false) {
            guard segment.hasPrefix("{") else {
                segments.append(String(segment))
                continue
            }
            guard let value = remaining.popFirst(), !value.isEmpty else {
                throw AppStoreClientError(.invalidRequest, "\(segment) must not be empty", endpoint: rawValue)
            }
            segments.append(Self.encodeSegment(value))
        }
        return segments.joined(separator: "/")
    }

    static func encodeSegment(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        // `.alphanumerics` includes non-ASCII letters; restrict to ASCII explicitly.
        return value.unicodeScalars.map { scalar -> String in
            if scalar.isASCII, allowed.contains(scalar) { return String(scalar) }
            return String(scalar).utf8.map { String(format: "%%%02X", $0) }.joined()
        }.joined()
    }
}
