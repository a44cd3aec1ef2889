import AppStoreClient
import AppStoreModels
import AppStoreTrust
import Storage

/// Why an ingestion did not complete. Every source (notifications, purchases, receipts,
/// restore, aliases, sync, and the jobs and recovery workers) throws only this; the HTTP layer maps `code` to a
/// status (STYLE 4: the status is chosen at the edge), a worker to a retry decision.
///
/// `code` is stable and is what API clients see as `error.code`; `message` is for people and
/// never carries a secret, a token or SQL arguments.
/// - Note: Immutable value; `Sendable`.
public struct IngestionError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        // What the caller sent.
        case invalidJSON = "invalid_json"
        case invalidBody = "invalid_body"
        case unrecognizedNotification = "unrecognized_notification"
        case invalidNotification = "invalid_notification"
        case invalidTransaction = "invalid_transaction"
        case environmentNotAccepted = "environment_not_accepted"
        case receiptInvalid = "receipt_invalid"
        /// Signed data refused by the trust core; `rule` names the check.
        case verificationFailed = "verification_failed"
        /// A V1 notification whose password is not the app's shared secret.
        case sharedSecretMismatch = "shared_secret_mismatch"
        case customerNotFound = "customer_not_found"
        case transactionNotFound = "transaction_not_found"
        // The app's configuration.
        case appNotFound = "app_not_found"
        case appNotConfigured = "app_not_configured"
        case appStoreNotConfigured = "app_store_not_configured"
        // Dependencies, retryable: `retryAfterSeconds` says when.
        case verificationUnavailable = "verification_unavailable"
        case appStoreUnavailable = "app_store_unavailable"
        case databaseUnavailable = "database_unavailable"
        /// The caller asked again too soon (an on-demand sync of one customer): 429.
        case rateLimited = "rate_limited"
        // The App Store answered, but not usefully.
        case appStoreError = "app_store_error"
        case appStoreDataRejected = "app_store_data_rejected"
        case appStoreDataIncomplete = "app_store_data_incomplete"
        // Google Play.
        /// The app has no Play side, or not the part the call needs (service-account key, push audience).
        case googlePlayNotConfigured = "google_play_not_configured"
        /// A Pub/Sub push whose OIDC token was refused; `rule` names the check.
        case pushUnauthenticated = "push_unauthenticated"
        /// Google could not be reached or answered 429/5xx: retryable.
        case googlePlayUnavailable = "google_play_unavailable"
        /// Google answered, but refused or with something unreadable.
        case googlePlayError = "google_play_error"
        // The store refused a write.
        case conflict = "conflict"
        case duplicate = "duplicate"
        case notFound = "not_found"
        case `internal` = "internal_error"
    }

    public var code: Code
    public var message: String
    /// The trust rule that refused (`verificationFailed`, `verificationUnavailable`,
    /// `appNotConfigured` from the verifier).
    public var rule: String?
    /// For retryable failures: how long the caller should wait.
    public var retryAfterSeconds: Int?

    public init(_ code: Code, _ message: String, rule: String? = nil, retryAfterSeconds: Int? = nil) {
        self.code = code
        self.message = message
        self.rule = rule
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// Whether trying the same ingestion later may succeed.
    public var isRetryable: Bool { retryAfterSeconds != nil }

    public var description: String { "\(code.rawValue): \(message)" }
}

extension IngestionError {
    /// Signed data the trust core refused: a verification failure, or a check that could not
    /// be made (retry), or an app that cannot verify yet.
    public static func trust(_ error: TrustError) -> IngestionError {
        let rule = error.rule.rawValue
        switch error.category {
        case .retryableVerificationFailure:
            return IngestionError(
                .verificationUnavailable, "Verification could not be completed (\(rule)); retry later.", rule: rule,
                retryAfterSeconds: 30)
        case .invalidConfiguration:
            return IngestionError(
                .appNotConfigured, "The app cannot verify signed data yet (\(rule)).", rule: rule)
        default:
            return IngestionError(
                .verificationFailed, "The signed payload failed verification (\(rule)).", rule: rule)
        }
    }

    /// A store failure: a lost version race (`conflict`, the caller may repeat the request), a
    /// duplicate identifier, a value no store can hold (`invalidBody`), or else retryable
    /// `databaseUnavailable` (as the API has always answered).
    public static func store(_ error: any Error) -> IngestionError {
        if let ingestion = error as? IngestionError { return ingestion }
        guard let store = error as? StoreError else {
            return IngestionError(.internal, "An internal error occurred.")
        }
        switch store.code {
        case .versionConflict:
            return IngestionError(.conflict, "A concurrent update won; try again.")
        case .duplicate:
            return IngestionError(.duplicate, "That identifier is already in use.")
        case .notFound:
            return IngestionError(.notFound, "Not found.")
        case .unstorableValue:
            // Retrying the same input cannot succeed, so not a retryable 503. It is the client's
            // own input wherever a client sends text; signed data from Apple or Google holds no
            // NUL, and a notification answered 400 is still sent again by them.
            return IngestionError(.invalidBody, "A text value holds a NUL character, which cannot be stored.")
        default:
            return IngestionError(
                .databaseUnavailable,
                "The database could not complete the request (\(store.code.rawValue)); retry later.",
                retryAfterSeconds: 5)
        }
    }

    /// An App Store Server API or verifyReceipt failure.
    public static func appStore(_ error: AppStoreClientError) -> IngestionError {
        if error.isTransient {
            return IngestionError(
                .appStoreUnavailable, "The App Store did not answer (\(error.code.rawValue)); retry later.",
                retryAfterSeconds: 30)
        }
        switch error.code {
        case .invalidConfiguration:
            // Nothing was asked of Apple: the app lacks what the call needs (an App Store
            // Connect key, a shared secret). The caller's configuration, not a gateway failure.
            return .appStoreNotConfigured
        case .receiptInvalid, .receiptBadRequest:
            return IngestionError(.receiptInvalid, "Apple refused the receipt.")
        case .apiError where error.httpStatus == 404:
            return IngestionError(.transactionNotFound, "The App Store does not know that transaction.")
        default:
            return IngestionError(.appStoreError, "The App Store request failed (\(error.code.rawValue)).")
        }
    }

    /// A call that needs the App Store Server API, for an app without an App Store Connect key.
    /// (verifyReceipt never needs configuring: the legacy flow works without a shared secret.)
    public static let appStoreNotConfigured = IngestionError(
        .appStoreNotConfigured, "The app has no App Store Connect key configured.")

    /// `appStoreNotConfigured` for an app that has a shared secret: the secret cannot stand in for
    /// the key, and saying "or shared secret" sent operators to set one they already had.
    static let appStoreNotConfiguredSharedSecretUnused = IngestionError(
        .appStoreNotConfigured,
        "The app has no App Store Connect key configured; its shared secret only serves the legacy receipt flow (legacyReceiptFlow), which is off."
    )

    static let appStoreConfigurationUnusable = IngestionError(
        .appStoreNotConfigured, "The app's App Store Connect configuration cannot be used.")

    static let appStoreDataIncomplete = IngestionError(
        .appStoreDataIncomplete, "The App Store sent an incomplete payload.")

    public static let customerNotFound = IngestionError(.customerNotFound, "No such customer.")

    public static let appNotFound = IngestionError(.appNotFound, "No such app.")

    static let noEnvironment = IngestionError(.appNotConfigured, "The app accepts no environment.")

    static func invalidBody(_ message: String) -> IngestionError { IngestionError(.invalidBody, message) }
}
