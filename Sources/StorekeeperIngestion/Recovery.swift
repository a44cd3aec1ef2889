import Storage

/// The recovery sources over one store: notification history replay, status polling and
/// on-demand sync. The server's workers and the sync route hold this.
/// - Note: Immutable and `Sendable`.
public struct Recovery: Sendable {
    public let history: NotificationHistoryReplay
    public let polling: SubscriptionStatusPolling
    public let sync: CustomerSync

    init(
        store: any Store, clock: ServerClock, notifications: NotificationIngestor, writer: IngestionWriter,
        purchases: PurchaseIngestor, metrics: any IngestionMetrics, syncInterval: Duration
    ) {
        history = NotificationHistoryReplay(store: store, clock: clock, notifications: notifications)
        polling = SubscriptionStatusPolling(writer: writer, purchases: purchases, clock: clock)
        sync = CustomerSync(
            writer: writer, purchases: purchases, clock: clock, throttle: CustomerSyncThrottle(interval: syncInterval))
    }
}
