/// The `status` of a verifyReceipt response (and of a V1 notification's `unified_receipt`),
/// with Apple's meaning and what a client should do about it.
///
/// Any integer decodes (as a JSON number or a string); codes Apple never documented classify as
/// `.unknown` and keep their value.
/// - Note: Immutable value; `Sendable`.
public struct VerifyReceiptStatus: RawRepresentable, Sendable, Hashable, Codable,
    CustomStringConvertible
{
    /// What a status means for the caller.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// 0: the receipt is valid.
        case valid
        /// 21006: the receipt is valid but the subscription in an iOS 6 style transaction receipt expired.
        case validButSubscriptionExpired
        /// 21000, 21001: the request itself was wrong (not POST, or a code Apple no longer sends).
        case badRequest
        /// 21002, 21003, 21010: the receipt cannot be used (malformed, not authentic, account gone).
        case badReceipt
        /// 21004: the shared secret does not match the app's: fix the configuration.
        case configurationError
        /// 21005, 21009, 21100–21199: Apple's side failed; try again later.
        case retryable
        /// 21007: a sandbox receipt was sent to production; send it to the sandbox URL.
        case sandboxReceiptSentToProduction
        /// 21008: a production receipt was sent to the sandbox; send it to the production URL.
        case productionReceiptSentToSandbox
        /// Anything else.
        case unknown
    }

    public let rawValue: Int64

    public init(rawValue: Int64) { self.rawValue = rawValue }

    public static let valid = VerifyReceiptStatus(rawValue: 0)
    public static let notPOST = VerifyReceiptStatus(rawValue: 21000)
    public static let noLongerSent = VerifyReceiptStatus(rawValue: 21001)
    public static let malformedReceiptData = VerifyReceiptStatus(rawValue: 21002)
    public static let notAuthenticated = VerifyReceiptStatus(rawValue: 21003)
    public static let sharedSecretMismatch = VerifyReceiptStatus(rawValue: 21004)
    public static let receiptServerUnavailable = VerifyReceiptStatus(rawValue: 21005)
    public static let subscriptionExpired = VerifyReceiptStatus(rawValue: 21006)
    public static let sandboxReceiptSentToProduction = VerifyReceiptStatus(rawValue: 21007)
    public static let productionReceiptSentToSandbox = VerifyReceiptStatus(rawValue: 21008)
    public static let internalDataAccessError = VerifyReceiptStatus(rawValue: 21009)
    public static let accountNotFound = VerifyReceiptStatus(rawValue: 21010)

    public var kind: Kind {
        switch rawValue {
        case 0: return .valid
        case 21006: return .validButSubscriptionExpired
        case 21000, 21001: return .badRequest
        case 21002, 21003, 21010: return .badReceipt
        case 21004: return .configurationError
        case 21005, 21009, 21100...21199: return .retryable
        case 21007: return .sandboxReceiptSentToProduction
        case 21008: return .productionReceiptSentToSandbox
        default: return .unknown
        }
    }

    /// Apple's documented meaning, paraphrased closely enough to match Apple's documentation.
    public var meaning: String {
        switch rawValue {
        case 0: return "The receipt is valid."
        case 21000:
            return "The request to the App Store was not made using the HTTP POST request method."
        case 21001: return "This status code is no longer sent by the App Store."
        case 21002:
            return
                "The data in the receipt-data property was malformed or the service experienced a temporary issue. Try again."
        case 21003: return "The receipt could not be authenticated."
        case 21004:
            return
                "The shared secret you provided does not match the shared secret on file for your account."
        case 21005:
            return "The receipt server was temporarily unable to provide the receipt. Try again."
        case 21006:
            return
                "This receipt is valid but the subscription has expired. Only returned for iOS 6-style transaction receipts for auto-renewable subscriptions."
        case 21007:
            return
                "This receipt is from the test environment, but it was sent to the production environment for verification."
        case 21008:
            return
                "This receipt is from the production environment, but it was sent to the test environment for verification."
        case 21009: return "Internal data access error. Try again later."
        case 21010: return "The user account cannot be found or has been deleted."
        case 21100...21199: return "Internal data access error."
        default: return "Unknown status code."
        }
    }

    /// Whether the same request may succeed later. Apple's response also carries `is-retryable`
    /// for 21100–21199; this covers the documented codes when that flag is absent.
    public var isRetryable: Bool { kind == .retryable }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int64.self) {
            rawValue = number
        } else if let number = Int64(try container.decode(String.self)) {
            rawValue = number
        } else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "status is not an integer")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { "\(rawValue)" }
}
