/// An error code of the App Store Server API (and the Retention Messaging API that shares its
/// host), named as Apple names them, without the `Error` suffix.
///
/// Read it through `RawEnum<APIError>` (see `ErrorPayload`) so that a code Apple adds later stays
/// visible as a number instead of failing the decode.
public enum APIError: Int64, Sendable, Hashable, Codable, CaseIterable {
    /// An invalid request.
    case generalBadRequest = 4000000
    /// An invalid app identifier.
    case invalidAppIdentifier = 4000002
    /// An invalid request revision.
    case invalidRequestRevision = 4000005
    /// An invalid transaction identifier.
    case invalidTransactionId = 4000006
    /// An invalid original transaction identifier.
    case invalidOriginalTransactionId = 4000008
    /// An invalid extend-by-days value.
    case invalidExtendByDays = 4000009
    /// An invalid extend reason code.
    case invalidExtendReasonCode = 4000010
    /// An invalid request identifier.
    case invalidRequestIdentifier = 4000011
    /// The start date is earlier than the earliest allowed date.
    case startDateTooFarInPast = 4000012
    /// The end date precedes the start date, or the two dates are equal.
    case startDateAfterEndDate = 4000013
    /// The pagination token is invalid.
    case invalidPaginationToken = 4000014
    /// The start date is invalid.
    case invalidStartDate = 4000015
    /// The end date is invalid.
    case invalidEndDate = 4000016
    /// The pagination token expired.
    case paginationTokenExpired = 4000017
    /// The notification type or subtype is invalid.
    case invalidNotificationType = 4000018
    /// The request has too many constraints applied.
    case multipleFiltersSupplied = 4000019
    /// The test notification token is invalid.
    case invalidTestNotificationToken = 4000020
    /// An invalid sort parameter.
    case invalidSort = 4000021
    /// An invalid product type parameter.
    case invalidProductType = 4000022
    /// The product ID parameter is invalid.
    case invalidProductId = 4000023
    /// An invalid subscription group identifier.
    case invalidSubscriptionGroupIdentifier = 4000024
    /// The exclude-revoked parameter is invalid (deprecated by Apple).
    case invalidExcludeRevoked = 4000025
    /// An invalid in-app ownership type parameter.
    case invalidInAppOwnershipType = 4000026
    /// A required storefront country code list is empty.
    case invalidEmptyStorefrontCountryCodeList = 4000027
    /// A storefront code is invalid.
    case invalidStorefrontCountryCode = 4000028
    /// The revoked parameter contains an invalid value.
    case invalidRevoked = 4000030
    /// The status parameter is invalid.
    case invalidStatus = 4000031
    /// The account tenure field is invalid.
    case invalidAccountTenure = 4000032
    /// The app account token field is invalid.
    case invalidAppAccountToken = 4000033
    /// The consumption status field is invalid.
    case invalidConsumptionStatus = 4000034
    /// The customer consented field is invalid or does not say the customer consented.
    case invalidCustomerConsented = 4000035
    /// The delivery status field is invalid.
    case invalidDeliveryStatus = 4000036
    /// The lifetime dollars purchased field is invalid.
    case invalidLifetimeDollarsPurchased = 4000037
    /// The lifetime dollars refunded field is invalid.
    case invalidLifetimeDollarsRefunded = 4000038
    /// The platform field is invalid.
    case invalidPlatform = 4000039
    /// The play time field is invalid.
    case invalidPlayTime = 4000040
    /// The sample content provided field is invalid.
    case invalidSampleContentProvided = 4000041
    /// The user status field is invalid.
    case invalidUserStatus = 4000042
    /// The transaction is not a consumable (deprecated by Apple).
    case invalidTransactionNotConsumable = 4000043
    /// The transaction is of an unsupported in-app purchase type.
    case invalidTransactionTypeNotSupported = 4000047
    /// The endpoint does not support an app transaction ID.
    case appTransactionIdNotSupported = 4000048
    /// The uploaded retention-messaging image is invalid.
    case invalidImage = 4000161
    /// The retention message header is too long.
    case headerTooLong = 4000162
    /// The retention message body is too long.
    case bodyTooLong = 4000163
    /// The locale is invalid.
    case invalidLocale = 4000164
    /// The image alternative text is too long.
    case altTextTooLong = 4000175
    /// The app account token is not a valid UUID.
    case invalidAppAccountTokenUUID = 4000183
    /// The endpoint does not support Family Sharing transactions.
    case familyTransactionNotSupported = 4000185
    /// The endpoint expects an original transaction ID.
    case transactionIdIsNotOriginalTransactionId = 4000187
    /// The endpoint does not support transactions an organization or group assigns.
    case invalidAssignedTransactionNotSupported = 4000227
    /// The subscription's state does not allow a renewal-date extension.
    case subscriptionExtensionIneligible = 4030004
    /// The subscription already received the maximum extensions.
    case subscriptionMaxExtension = 4030005
    /// A Family Sharing subscription cannot be extended directly.
    case familySharedSubscriptionExtensionIneligible = 4030007
    /// The app reached the maximum number of retention-messaging images.
    case maximumNumberOfImagesReached = 4030014
    /// The app reached the maximum number of retention messages.
    case maximumNumberOfMessagesReached = 4030016
    /// The retention message is not approved.
    case messageNotApproved = 4030017
    /// The retention-messaging image is not approved.
    case imageNotApproved = 4030018
    /// The image is in use by a message.
    case imageInUse = 4030019
    /// The App Store account was not found.
    case accountNotFound = 4040001
    /// The App Store account was not found; try again.
    case accountNotFoundRetryable = 4040002
    /// The app was not found.
    case appNotFound = 4040003
    /// The app was not found; try again.
    case appNotFoundRetryable = 4040004
    /// The original transaction identifier was not found.
    case originalTransactionIdNotFound = 4040005
    /// The original transaction identifier was not found; try again.
    case originalTransactionIdNotFoundRetryable = 4040006
    /// No notification URL is configured for the app in this environment.
    case serverNotificationUrlNotFound = 4040007
    /// The test notification token expired or its status is not available.
    case testNotificationNotFound = 4040008
    /// No renewal-date extension request matches the request and product identifiers.
    case statusRequestNotFound = 4040009
    /// The transaction identifier was not found.
    case transactionIdNotFound = 4040010
    /// The retention-messaging image was not found.
    case imageNotFound = 4040014
    /// The retention message was not found.
    case messageNotFound = 4040015
    /// No app transaction exists for the customer.
    case appTransactionDoesNotExist = 4040019
    /// An image with this identifier already exists.
    case imageAlreadyExists = 4090000
    /// A message with this identifier already exists.
    case messageAlreadyExists = 4090001
    /// The request exceeded the rate limit.
    case rateLimitExceeded = 4290000
    /// A general internal error.
    case generalInternal = 5000000
    /// An unknown error occurred; try again.
    case generalInternalRetryable = 5000001
}

extension APIError {
    /// Apple's "…Retryable" errors: the same request may succeed later, so the client should
    /// back off and try again rather than report a permanent failure.
    public var isRetryable: Bool {
        switch self {
        case .accountNotFoundRetryable, .appNotFoundRetryable, .originalTransactionIdNotFoundRetryable,
            .generalInternalRetryable:
            return true
        default:
            return false
        }
    }

    /// HTTP 429: retry after a pause; Apple's limits are per hour, per endpoint.
    public var isRateLimit: Bool { self == .rateLimitExceeded }

    /// The HTTP status Apple serves this error with, derived from the code's first three digits
    /// (4040010 → 404). The simulator uses it to answer exactly as Apple does.
    public var httpStatus: Int { Int(rawValue / 10_000) }
}
