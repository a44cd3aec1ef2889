import AppStoreClient
import AppStoreModels
import Foundation
import Storage

/// The `consumption_request` job: answers Apple's `CONSUMPTION_REQUEST` with Send Consumption
/// Information (v2), computed by `ConsumptionDecision` from the app's `ConsumptionPolicy` and
/// what the app reported (the customer's consent, the transaction's delivery and usage).
///
/// The job is queued due at once with the notification, so it runs well inside Apple's 12-hour
/// window; a request whose window has passed is not answered. Every outcome is recorded in
/// `consumption_answers` in the same transaction that completes the job: `sent` with the body
/// sent, or `withheld` with the reason (no consent, window passed). The call to Apple takes its
/// slot from the app's rate limiter like every other path (the connection is rate-limited).
/// - Note: Immutable and `Sendable`.
public struct ConsumptionResponder: JobHandler {
    public static let kind = "consumption_request"

    /// What the job row holds: nothing secret. Jobs queued before `environment`, `requestedAt`
    /// and `purchase` were recorded still run (the app's first environment, no window check,
    /// no usage estimate).
    /// - Note: Immutable value; `Sendable`.
    public struct Payload: Sendable, Hashable, Codable {
        public var appId: String
        public var notificationUUID: String
        public var originalTransactionId: String?
        public var transactionId: String?
        public var environment: AppStoreEnvironment?
        /// The notification's `signedDate`: when Apple's window opened.
        public var requestedAt: Timestamp?
        public var purchase: ConsumedPurchase?

        public init(
            appId: String, notificationUUID: String, originalTransactionId: String?, transactionId: String?,
            environment: AppStoreEnvironment?, requestedAt: Timestamp?, purchase: ConsumedPurchase?
        ) {
            self.appId = appId
            self.notificationUUID = notificationUUID
            self.originalTransactionId = originalTransactionId
            self.transactionId = transactionId
            self.environment = environment
            self.requestedAt = requestedAt
            self.purchase = purchase
        }
    }

    let store: any Store
    let apps: AppRuntimes
    let clock: ServerClock
    let metrics: any IngestionMetrics

    public init(store: any Store, apps: AppRuntimes, clock: ServerClock, metrics: any IngestionMetrics) {
        self.store = store
        self.apps = apps
        self.clock = clock
        self.metrics = metrics
    }

    public var kind: String { Self.kind }

    public func run(_ job: JobRecord, lease: JobLease) async -> JobOutcome {
        guard job.payload.utf8.count <= 4096,
            let payload = try? AppStoreJSON.decode(Payload.self, from: Data(job.payload.utf8)),
            let transactionId = payload.transactionId
        else { return .failed("the job's payload is not a consumption request with a transaction") }
        do {
            return try await answer(payload, transactionId: transactionId, lease: lease)
        } catch {
            return PurchaseCompletion.outcome(of: error)
        }
    }

    private func answer(_ payload: Payload, transactionId: String, lease: JobLease) async throws(IngestionError)
        -> JobOutcome
    {
        let app = try await apps.runtime(appId: payload.appId)
        let now = clock.now()
        if let requestedAt = payload.requestedAt,
            now >= requestedAt.adding(milliseconds: ConsumptionDecision.windowMilliseconds)
        {
            return try await finish(
                payload, transactionId: transactionId, lease: lease, now: now,
                decision: .withhold(
                    code: "consumption.windowPassed", message: "Apple's 12-hour window to answer has passed."))
        }
        let appId = payload.appId
        let originalTransactionId = payload.originalTransactionId ?? transactionId
        let (consent, report): (Bool?, ConsumptionReport?)
        do {
            (consent, report) = try await store.read { reader in
                let owner = try reader.customer(appId: appId, .originalTransactionId(originalTransactionId))
                let consent = try owner.flatMap { try reader.consumptionConsent(appId: appId, appUserId: $0.appUserId) }
                return (consent, try reader.consumptionReport(appId: appId, transactionId: transactionId))
            }
        } catch {
            throw IngestionError.store(error)
        }
        let decision = ConsumptionDecision.decide(
            policy: app.settings.consumption ?? ConsumptionPolicy(), consent: consent,
            report: report.map { (deliveryStatus: $0.deliveryStatus, consumptionPercentage: $0.consumptionPercentage) },
            purchase: payload.purchase ?? ConsumedPurchase(productType: nil, purchaseDate: nil, expiresDate: nil),
            now: now)
        if case .send(let request) = decision {
            let environment = try app.environment(payload.environment)
            guard let connection = try app.connection(environment, required: true) else {
                throw app.missingAppStoreKey
            }
            do {
                try await connection.sendConsumptionInformation(transactionId: transactionId, request: request)
            } catch {
                metrics.recordConsumption(outcome: "failed")
                let reason = "consumption.sendFailed: \(error.description)"
                return error.isTransient ? .retry(reason) : .refused(reason)
            }
        }
        return try await finish(payload, transactionId: transactionId, lease: lease, now: now, decision: decision)
    }

    /// Records the answer and completes the job in one transaction.
    private func finish(
        _ payload: Payload, transactionId: String, lease: JobLease, now: Timestamp, decision: ConsumptionDecision
    ) async throws(IngestionError) -> JobOutcome {
        let record: ConsumptionAnswerRecord
        let outcome: String
        switch decision {
        case .send(let request):
            outcome = "sent"
            record = ConsumptionAnswerRecord(
                appId: payload.appId, notificationUUID: payload.notificationUUID, transactionId: transactionId,
                outcome: outcome, reason: nil, request: AppStoreJSON.encodeText(request),
                answeredAt: now)
        case .withhold(let code, let message):
            outcome = code == "consumption.windowPassed" ? "window_passed" : "withheld"
            record = ConsumptionAnswerRecord(
                appId: payload.appId, notificationUUID: payload.notificationUUID, transactionId: transactionId,
                outcome: "withheld", reason: "\(code): \(message)", request: nil, answeredAt: now)
        }
        do {
            try await store.write { transaction in
                try transaction.recordConsumptionAnswer(record)
                _ = try transaction.completeJob(id: lease.jobId, owner: lease.owner, at: now)
            }
        } catch {
            throw IngestionError.store(error)
        }
        metrics.recordConsumption(outcome: outcome)
        return .completed
    }
}
