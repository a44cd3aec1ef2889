import Storage

/// Commits `FactBatch`es: the only place ingestion writes facts. Each batch is all or nothing;
/// its caller hears back only after the transaction holding it is durable.
/// - Note: Immutable and `Sendable`; any number of tasks commit concurrently.
public struct IngestionWriter: Sendable {
    let store: any Store
    let metrics: any IngestionMetrics

    public init(store: any Store, metrics: any IngestionMetrics = DiscardingIngestionMetrics()) {
        self.store = store
        self.metrics = metrics
    }

    /// Commits `batch` (retrying a retryable store failure twice) and returns what it did.
    /// `operation` names the store latency metric.
    public func commit(_ batch: FactBatch, operation: String) async throws(IngestionError) -> FactCommit {
        do {
            return try await metrics.timed(operation) {
                try await store.write(retries: 2) { transaction in
                    try FactCommitter.commit(batch, in: transaction)
                }
            }
        } catch {
            throw IngestionError.store(error)
        }
    }
}
