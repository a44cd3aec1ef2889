import Storage

/// The Google Play recovery sources over one store: voided-purchases polling and re-reading
/// subscriptions that went quiet. The server's Play workers hold these.
extension GooglePlayIngestion {
    public var voidedPolling: PlayVoidedPurchasesPolling {
        PlayVoidedPurchasesPolling(store: store, clock: clock, ingestor: ingestor)
    }

    public var reread: PlaySubscriptionReread {
        PlaySubscriptionReread(clock: clock, ingestor: ingestor)
    }
}
