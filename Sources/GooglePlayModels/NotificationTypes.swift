/// `subscriptionNotification.notificationType`, numbers exactly as Google documents them;
/// numbers Google adds later survive through `PlayRawEnum`.
public enum SubscriptionNotificationType: Int, Sendable, Hashable, Codable, CaseIterable {
    case recovered = 1
    case renewed = 2
    case canceled = 3
    case purchased = 4
    case onHold = 5
    case inGracePeriod = 6
    case restarted = 7
    case priceChangeConfirmed = 8
    case deferred = 9
    case paused = 10
    case pauseScheduleChanged = 11
    case revoked = 12
    case expired = 13
    case itemsChanged = 17
    case cancellationScheduled = 18
    case priceChangeUpdated = 19
    case pendingPurchaseCanceled = 20
    case priceStepUpConsentUpdated = 22
}

/// `oneTimeProductNotification.notificationType`.
public enum OneTimeProductNotificationType: Int, Sendable, Hashable, Codable, CaseIterable {
    case purchased = 1
    case canceled = 2
}

/// `voidedPurchaseNotification.productType`.
public enum VoidedPurchaseProductType: Int, Sendable, Hashable, Codable, CaseIterable {
    case subscription = 1
    case oneTime = 2
}

/// `voidedPurchaseNotification.refundType`.
public enum VoidedPurchaseRefundType: Int, Sendable, Hashable, Codable, CaseIterable {
    case fullRefund = 1
    case quantityBasedPartialRefund = 2
}
