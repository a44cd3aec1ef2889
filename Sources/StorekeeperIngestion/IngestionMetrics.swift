/// What ingestion counts, for whoever renders metrics (the server's `/metrics`). Ingestion
/// knows no HTTP and no exposition format: it reports through this protocol.
/// - Note: Implementations must be thread-safe: ingestions report from any task.
public protocol IngestionMetrics: Sendable {
    /// One notification's outcome (`applied`, `duplicate`, `rejected`, `error`, …) by type.
    func recordNotification(type: String, outcome: String)
    /// A signed payload refused by a trust rule.
    func recordVerificationFailure(rule: String)
    /// How long one store operation took (`ingest_notification`, `ingest_purchase`, `read`, …).
    func recordDatabase(operation: String, seconds: Double)
    /// How a posted signed transaction was answered: `complete`, `pending` or `skipped`.
    func recordPurchaseCompletion(outcome: String)
    /// How a consumption request was handled: `sent`, `withheld`, `window_passed`, `failed`.
    func recordConsumption(outcome: String)
    /// Apple's refund decision (`REFUND`, `REFUND_DECLINED`) linked to an answered request.
    func recordConsumptionOutcome(_ outcome: String)
}

/// Counts nothing: for tools and tests that ingest without a metrics endpoint.
public struct DiscardingIngestionMetrics: IngestionMetrics {
    public init() {}
    public func recordNotification(type: String, outcome: String) {}
    public func recordVerificationFailure(rule: String) {}
    public func recordDatabase(operation: String, seconds: Double) {}
}

extension IngestionMetrics {
    /// Counts nothing unless the implementation does.
    public func recordPurchaseCompletion(outcome: String) {}
    public func recordConsumption(outcome: String) {}
    public func recordConsumptionOutcome(_ outcome: String) {}

    /// Runs `body` and records its duration as `operation`, whether it succeeds or throws.
    public func timed<R>(_ operation: String, _ body: () async throws -> R) async rethrows -> R {
        let started = ContinuousClock.now
        defer { recordDatabase(operation: operation, since: started) }
        return try await body()
    }

    /// Records the time from `started` to now as one `operation`.
    public func recordDatabase(operation: String, since started: ContinuousClock.Instant) {
        recordDatabase(operation: operation, seconds: (ContinuousClock.now - started) / .seconds(1))
    }
}
