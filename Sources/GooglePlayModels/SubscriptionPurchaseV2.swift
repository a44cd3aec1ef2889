/// `purchases.subscriptionsv2.get`: the state of one subscription purchase token.
///
/// Field names and enum strings exactly as the `androidpublisher` v3 discovery document has
/// them; every field is optional because Google omits what does not apply. Members that are
/// empty objects on the wire (`testPurchase`) matter by their presence.
/// - Note: Immutable value; `Sendable`.
public struct SubscriptionPurchaseV2: Sendable, Hashable, Codable {
    /// `androidpublisher#subscriptionPurchaseV2`.
    public var kind: String?
    public var regionCode: String?
    public var lineItems: [SubscriptionPurchaseLineItem]?
    public var startTime: GoogleDateTime?
    public var subscriptionState: PlayRawEnum<SubscriptionState>?
    /// The previous token this purchase replaces: a re-signup, an upgrade or downgrade, or a
    /// conversion between prepaid and auto-renewing. The old token stops granting.
    public var linkedPurchaseToken: String?
    public var pausedStateContext: PausedStateContext?
    public var canceledStateContext: CanceledStateContext?
    public var inGracePeriodStateContext: InGracePeriodStateContext?
    public var onHoldStateContext: OnHoldStateContext?
    /// Present (as `{}`) when the purchase was made by a license tester.
    public var testPurchase: TestPurchase?
    public var acknowledgementState: PlayRawEnum<AcknowledgementState>?
    public var externalAccountIdentifiers: ExternalAccountIdentifiers?
    public var subscribeWithGoogleInfo: SubscribeWithGoogleInfo?
    public var outOfAppPurchaseContext: OutOfAppPurchaseContext?
    public var etag: String?

    public init(
        kind: String? = "androidpublisher#subscriptionPurchaseV2", regionCode: String? = nil,
        lineItems: [SubscriptionPurchaseLineItem]? = nil, startTime: GoogleDateTime? = nil,
        subscriptionState: PlayRawEnum<SubscriptionState>? = nil, linkedPurchaseToken: String? = nil,
        pausedStateContext: PausedStateContext? = nil, canceledStateContext: CanceledStateContext? = nil,
        inGracePeriodStateContext: InGracePeriodStateContext? = nil, onHoldStateContext: OnHoldStateContext? = nil,
        testPurchase: TestPurchase? = nil, acknowledgementState: PlayRawEnum<AcknowledgementState>? = nil,
        externalAccountIdentifiers: ExternalAccountIdentifiers? = nil,
        subscribeWithGoogleInfo: SubscribeWithGoogleInfo? = nil,
        outOfAppPurchaseContext: OutOfAppPurchaseContext? = nil,
        etag: String? = nil
    ) {
        self.kind = kind
        self.regionCode = regionCode
        self.lineItems = lineItems
        self.startTime = startTime
        self.subscriptionState = subscriptionState
        self.linkedPurchaseToken = linkedPurchaseToken
        self.pausedStateContext = pausedStateContext
        self.canceledStateContext = canceledStateContext
        self.inGracePeriodStateContext = inGracePeriodStateContext
        self.onHoldStateContext = onHoldStateContext
        self.testPurchase = testPurchase
        self.acknowledgementState = acknowledgementState
        self.externalAccountIdentifiers = externalAccountIdentifiers
        self.subscribeWithGoogleInfo = subscribeWithGoogleInfo
        self.outOfAppPurchaseContext = outOfAppPurchaseContext
        self.etag = etag
    }
}

/// `SubscriptionPurchaseV2.subscriptionState`.
public enum SubscriptionState: String, Sendable, Hashable, Codable, CaseIterable {
    case unspecified = "SUBSCRIPTION_STATE_UNSPECIFIED"
    case pending = "SUBSCRIPTION_STATE_PENDING"
    case active = "SUBSCRIPTION_STATE_ACTIVE"
    case paused = "SUBSCRIPTION_STATE_PAUSED"
    case inGracePeriod = "SUBSCRIPTION_STATE_IN_GRACE_PERIOD"
    case onHold = "SUBSCRIPTION_STATE_ON_HOLD"
    case canceled = "SUBSCRIPTION_STATE_CANCELED"
    case expired = "SUBSCRIPTION_STATE_EXPIRED"
    case pendingPurchaseCanceled = "SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED"
}

/// `SubscriptionPurchaseV2.acknowledgementState`.
public enum AcknowledgementState: String, Sendable, Hashable, Codable, CaseIterable {
    case unspecified = "ACKNOWLEDGEMENT_STATE_UNSPECIFIED"
    case pending = "ACKNOWLEDGEMENT_STATE_PENDING"
    case acknowledged = "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED"
}

/// Marks a purchase by a license tester; an empty object on the wire.
public struct TestPurchase: Sendable, Hashable, Codable {
    public init() {}
}

/// The app's own account identifiers given at purchase time: `obfuscatedExternalAccountId`
/// plays the role of Apple's `appAccountToken`.
/// - Note: Immutable value; `Sendable`.
public struct ExternalAccountIdentifiers: Sendable, Hashable, Codable {
    public var externalAccountId: String?
    public var obfuscatedExternalAccountId: String?
    public var obfuscatedExternalProfileId: String?

    public init(
        externalAccountId: String? = nil, obfuscatedExternalAccountId: String? = nil,
        obfuscatedExternalProfileId: String? = nil
    ) {
        self.externalAccountId = externalAccountId
        self.obfuscatedExternalAccountId = obfuscatedExternalAccountId
        self.obfuscatedExternalProfileId = obfuscatedExternalProfileId
    }
}

/// The Google account of a Subscribe with Google purchase.
/// - Note: Immutable value; `Sendable`.
public struct SubscribeWithGoogleInfo: Sendable, Hashable, Codable {
    public var profileId: String?
    public var profileName: String?
    public var emailAddress: String?
    public var givenName: String?
    public var familyName: String?

    public init(
        profileId: String? = nil, profileName: String? = nil, emailAddress: String? = nil, givenName: String? = nil,
        familyName: String? = nil
    ) {
        self.profileId = profileId
        self.profileName = profileName
        self.emailAddress = emailAddress
        self.givenName = givenName
        self.familyName = familyName
    }
}

/// A purchase made outside the app that replaced an expired one.
/// - Note: Immutable value; `Sendable`.
public struct OutOfAppPurchaseContext: Sendable, Hashable, Codable {
    public var expiredExternalAccountIdentifiers: ExternalAccountIdentifiers?
    public var expiredPurchaseToken: String?

    public init(
        expiredExternalAccountIdentifiers: ExternalAccountIdentifiers? = nil, expiredPurchaseToken: String? = nil
    ) {
        self.expiredExternalAccountIdentifiers = expiredExternalAccountIdentifiers
        self.expiredPurchaseToken = expiredPurchaseToken
    }
}
