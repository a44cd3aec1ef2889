/// An error code of the App Store Server API (and the Retention Messaging API that shares its
/// host), named as Apple names them, without the `Error` suffix.
///
/// Read it through `RawEnum<APIError>` (see `ErrorPayload`) so that a code Apple adds later stays
/// visible as a number instead of failing the decode.
public enum APIError: Int64, Sendable, Hashable, Codable, CaseIterable {
    /// An invalid request.
    case generalBadRequest = 4_000_000
    /// An invalid app identifier.
    case invalidAppIdentifier = 4_000_002
    /// The request limit is outside the supported range.
    case invalidLimit = 4_000_004
    /// An invalid request revision.
    case invalidRequestRevision = 4_000_005
    /// An invalid transaction identifier.
    case invalidTransactionId = 4_000_006
    /// An invalid original transaction identifier.
    case invalidOriginalTransactionId = 4_000_008
    /// An invalid extend-by-days value.
    case invalidExtendByDays = 4_000_009
    /// An invalid extend reason code.
    case invalidExtendReasonCode = 4_000_010
    /// An invalid request identifier.
    case invalidRequestIdentifier = 4_000_011
    /// The start date is earlier than the earliest allowed date.
    case startDateTooFarInPast = 4_000_012
    /// The end date precedes the start date, or the two dates are equal.
    case startDateAfterEndDate = 4_000_013
    /// The pagination token is invalid.
    case invalidPaginationToken = 4_000_014
    /// The start date is invalid.
    case invalidStartDate = 4_000_015
    /// The end date is invalid.
    case invalidEndDate = 4_000_016
    /// The pagination token expired.
    case paginationTokenExpired = 4_000_017
    /// The notification type or subtype is invalid.
    case invalidNotificationType = 4_000_018
    /// The request has too many constraints applied.
    case multipleFiltersSupplied = 4_000_019
    /// The test notification token is invalid.
    case invalidTestNotificationToken = 4_000_020
    /// An invalid sort parameter.
    case invalidSort = 4_000_021
    /// An invalid product type parameter.
    case invalidProductType = 4_000_022
    /// The product ID parameter is invalid.
    case invalidProductId = 4_000_023
    /// An invalid subscription group identifier.
    case invalidSubscriptionGroupIdentifier = 4_000_024
    /// The exclude-revoked parameter is invalid (deprecated by Apple).
    case invalidExcludeRevoked = 4_000_025
    /// An invalid in-app ownership type parameter.
    case invalidInAppOwnershipType = 4_000_026
    /// A required storefront country code list is empty.
    case invalidEmptyStorefrontCountryCodeList = 4_000_027
    /// A storefront code is invalid.
    case invalidStorefrontCountryCode = 4_000_028
    /// The revoked parameter contains an invalid value.
    case invalidRevoked = 4_000_030
    /// The status parameter is invalid.
    case invalidStatus = 4_000_031
    /// The account tenure field is invalid.
    case invalidAccountTenure = 4_000_032
    /// The app account token field is invalid.
    case invalidAppAccountToken = 4_000_033
    /// The consumption status field is invalid.
    case invalidConsumptionStatus = 4_000_034
    /// The customer consented field is invalid or does not say the customer consented.
    case invalidCustomerConsented = 4_000_035
    /// The delivery status field is invalid.
    case invalidDeliveryStatus = 4_000_036
    /// The lifetime dollars purchased field is invalid.
    case invalidLifetimeDollarsPurchased = 4_000_037
    /// The lifetime dollars refunded field is invalid.
    case invalidLifetimeDollarsRefunded = 4_000_038
    /// The platform field is invalid.
    case invalidPlatform = 4_000_039
    /// The play time field is invalid.
    case invalidPlayTime = 4_000_040
    /// The sample content provided field is invalid.
    case invalidSampleContentProvided = 4_000_041
    /// The user status field is invalid.
    case invalidUserStatus = 4_000_042
    /// The transaction is not a consumable (deprecated by Apple).
    case invalidTransactionNotConsumable = 4_000_043
    /// The refund preference value is invalid.
    case invalidRefundPreference = 4_000_044
    /// The transaction is of an unsupported in-app purchase type.
    case invalidTransactionTypeNotSupported = 4_000_047
    /// The endpoint does not support an app transaction ID.
    case appTransactionIdNotSupported = 4_000_048
    /// The uploaded retention-messaging image is invalid.
    case invalidImage = 4_000_161
    /// The retention message header is too long.
    case headerTooLong = 4_000_162
    /// The retention message body is too long.
    case bodyTooLong = 4_000_163
    /// The locale is invalid.
    case invalidLocale = 4_000_164
    /// The image alternative text is too long.
    case altTextTooLong = 4_000_175
    /// The app account token is not a valid UUID.
    case invalidAppAccountTokenUUID = 4_000_183
    /// The endpoint does not support Family Sharing transactions.
    case familyTransactionNotSupported = 4_000_185
    /// The endpoint expects an original transaction ID.
    case transactionIdIsNotOriginalTransactionId = 4_000_187
    /// The consumption percentage field is not supported for auto-renewable subscription transactions.
    case consumptionPercentageAutoRenewableSubscription = 4_000_209
    /// The retention-messaging performance test request is invalid.
    case invalidPerformanceTestRequest = 4_000_211
    /// The retention-messaging request ID is invalid.
    case invalidRequestId = 4_000_212
    /// A performance test run with this ID is already in progress.
    case existingPerformanceTestRun = 4_000_213
    /// The retention-messaging realtime URL is invalid.
    case badRequestRealtimeUrl = 4_000_215
    /// The retention-messaging image size is invalid.
    case badRequestImageSize = 4_000_216
    /// The retention message has too many bullet points.
    case badRequestTooManyBulletPoints = 4_000_218
    /// The text of a retention-message bullet point is too long.
    case badRequestBulletPointTextTooLong = 4_000_219
    /// The header is placed above an image, but the retention message has no image.
    case badRequestAboveImageRequiresAnImage = 4_000_224
    /// The group identifier is invalid.
    case invalidGroupId = 4_000_225
    /// The endpoint does not support transactions an organization or group assigns.
    case invalidAssignedTransactionNotSupported = 4_000_227
    /// The subscription's state does not allow a renewal-date extension.
    case subscriptionExtensionIneligible = 4_030_004
    /// The subscription already received the maximum extensions.
    case subscriptionMaxExtension = 4_030_005
    /// A Family Sharing subscription cannot be extended directly.
    case familySharedSubscriptionExtensionIneligible = 4_030_007
    /// The app reached the maximum number of retention-messaging images.
    case maximumNumberOfImagesReached = 4_030_014
    /// The app reached the maximum number of retention messages.
    case maximumNumberOfMessagesReached = 4_030_016
    /// The retention message is not approved.
    case messageNotApproved = 4_030_017
    /// The retention-messaging image is not approved.
    case imageNotApproved = 4_030_018
    /// The image is in use by a message.
    case imageInUse = 4_030_019
    /// A passing performance test is required before setting a production realtime URL.
    case forbiddenNoPassingTest = 4_030_026
    /// A subscription assigned by an organization or group cannot be extended directly.
    case assignedSubscriptionExtensionIneligible = 4_030_028
    /// The App Store account was not found.
    case accountNotFound = 4_040_001
    /// The App Store account was not found; try again.
    case accountNotFoundRetryable = 4_040_002
    /// The app was not found.
    case appNotFound = 4_040_003
    /// The app was not found; try again.
    case appNotFoundRetryable = 4_040_004
    /// The original transaction identifier was not found.
    case originalTransactionIdNotFound = 4_040_005
    /// The original transaction identifier was not found; try again.
    case originalTransactionIdNotFoundRetryable = 4_040_006
    /// No notification URL is configured for the app in this environment.
    case serverNotificationUrlNotFound = 4_040_007
    /// The test notification token expired or its status is not available.
    case testNotificationNotFound = 4_040_008
    /// No renewal-date extension request matches the request and product identifiers.
    case statusRequestNotFound = 4_040_009
    /// The transaction identifier was not found.
    case transactionIdNotFound = 4_040_010
    /// The retention-messaging image was not found.
    case imageNotFound = 4_040_014
    /// The retention message was not found.
    case messageNotFound = 4_040_015
    /// The retention-messaging performance test run was not found.
    case performanceTestRunNotFound = 4_040_018
    /// No app transaction exists for the customer.
    case appTransactionDoesNotExist = 4_040_019
    /// No default retention message is configured.
    case defaultMessageNotFound = 4_040_020
    /// No retention-messaging realtime URL is configured.
    case realtimeUrlNotFound = 4_040_021
    /// The group was not found.
    case groupNotFound = 4_040_022
    /// An image with this identifier already exists.
    case imageAlreadyExists = 4_090_000
    /// A message with this identifier already exists.
    case messageAlreadyExists = 4_090_001
    /// The request exceeded the rate limit.
    case rateLimitExceeded = 4_290_000
    /// A general internal error.
    case generalInternal = 5_000_000
    /// An unknown error occurred; try again.
    case generalInternalRetryable = 5_000_001
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
