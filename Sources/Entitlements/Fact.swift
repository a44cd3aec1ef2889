import AppStoreModels

/// A verified, immutable input to the engine. State is always derived from the whole set of
/// a customer's facts, so duplicates and arrival order do not matter.
/// - Note: Immutable value; `Sendable`. Indirect: every case's payload sits in a box, so
///   the arrays of a long history copy a reference per fact, not the largest payload.
public indirect enum Fact: Sendable, Hashable, Codable {
    case transaction(TransactionFact)
    case renewalInfo(RenewalFact)
    case notification(NotificationFact)
    /// A Google Play subscription snapshot (`purchases.subscriptionsv2.get`).
    case playSubscription(PlaySubscriptionFact)
    /// A Google Play one-time product purchase (`purchases.products.get`).
    case playProductPurchase(PlayProductPurchaseFact)
    /// A Google Play refund, chargeback or revocation.
    case playVoidedPurchase(PlayVoidedPurchaseFact)
    /// A Google Play order read from the orders API (`orders.get`): its exact developer revenue.
    case playOrder(PlayOrderFact)

    public var environment: AppStoreEnvironment {
        switch self {
        case .transaction(let fact): return fact.environment
        case .renewalInfo(let fact): return fact.environment
        case .notification(let fact): return fact.environment
        case .playSubscription(let fact): return fact.environment
        case .playProductPurchase(let fact): return fact.environment
        case .playVoidedPurchase(let fact): return fact.environment
        case .playOrder(let fact): return fact.environment
        }
    }

    /// The store the fact comes from.
    public var store: Marketplace {
        switch self {
        case .transaction, .renewalInfo, .notification: return .appStore
        case .playSubscription, .playProductPurchase, .playVoidedPurchase, .playOrder: return .playStore
        }
    }

    /// A verified StoreKit 2 transaction.
    public init(transaction: JWSTransactionDecodedPayload) throws(EntitlementsError) {
        self = .transaction(try TransactionFact(transaction))
    }

    /// A verified StoreKit 2 renewal info.
    public init(renewalInfo: JWSRenewalInfoDecodedPayload) throws(EntitlementsError) {
        self = .renewalInfo(try RenewalFact(renewalInfo))
    }

    public init(legacyTransaction: LegacyTransactionFact) {
        self = .transaction(TransactionFact(legacyTransaction))
    }

    public init(legacyRenewal: LegacyRenewalFact) {
        self = .renewalInfo(RenewalFact(legacyRenewal))
    }

    /// The facts of one verified V2 notification: its envelope plus the signed transaction and
    /// renewal info it carried, which the trust layer has already verified and decoded.
    /// Notifications without a customer's data (`TEST`, `SUMMARY`, …) give no fact.
    public static func facts(
        notification: ResponseBodyV2DecodedPayload, transaction: JWSTransactionDecodedPayload?,
        renewalInfo: JWSRenewalInfoDecodedPayload?
    ) throws(EntitlementsError) -> [Fact] {
        var facts: [Fact] = []
        let transactionFact = try transaction.map { payload throws(EntitlementsError) in try TransactionFact(payload) }
        let renewalFact = try renewalInfo.map { payload throws(EntitlementsError) in try RenewalFact(payload) }
        if let transactionFact { facts.append(.transaction(transactionFact)) }
        if let renewalFact { facts.append(.renewalInfo(renewalFact)) }
        guard let type = notification.notificationType?.rawValue,
            transactionFact != nil || renewalFact != nil
        else { return facts }
        guard let notificationId = notification.notificationUUID else {
            throw EntitlementsError(code: .missingField, field: "notificationUUID", payload: "notification")
        }
        guard let signedDate = notification.signedDate else {
            throw EntitlementsError(code: .missingField, field: "signedDate", payload: "notification")
        }
        let environment =
            try notification.data.map { data throws(EntitlementsError) in
                try TransactionFact.environment(data.environment, payload: "notification")
            } ?? transactionFact?.environment ?? renewalFact!.environment
        facts.append(
            .notification(
                NotificationFact(
                    notificationId: notificationId, type: type, subtype: notification.subtype?.rawValue,
                    signedDate: signedDate, environment: environment,
                    originalTransactionId: transactionFact?.originalTransactionId
                        ?? renewalFact?.originalTransactionId,
                    transactionId: transactionFact?.transactionId,
                    productId: transactionFact?.productId ?? renewalFact?.productId)))
        return facts
    }
}
