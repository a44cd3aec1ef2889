import AppStoreClient
import AppStoreModels
import AppStoreTrust
import Entitlements
import Storage

/// Status polling: asks Get All Subscription Statuses about one watched original transaction
/// and commits the verified signed transactions and renewal infos through the one commit path,
/// owned by whoever owns the purchase (`existingOwner`). What a lost notification would have
/// said (a renewal, an expiry, a billing retry, a recovery) arrives this way instead.
/// - Note: Immutable and `Sendable`.
public struct SubscriptionStatusPolling: Sendable {
    let writer: IngestionWriter
    let purchases: PurchaseIngestor
    let clock: ServerClock

    /// Polls `originalTransactionId` for `app` in `environment`; returns what the commit did
    /// (`applied` when an owner was re-evaluated, `unclaimed` when nobody owns it yet,
    /// `recorded` when Apple had nothing for it).
    public func poll(app: AppRuntime, environment: AppStoreEnvironment, originalTransactionId: String)
        async throws(IngestionError) -> FactCommit.Outcome
    {
        guard let connection = try app.connection(environment, required: true) else { throw app.missingAppStoreKey }
        let facts = try await purchases.statuses(
            app: app, environment: environment, transactionId: originalTransactionId, via: connection)
        guard !facts.transactions.isEmpty || !facts.renewals.isEmpty else { return .recorded }
        let now = clock.now()
        var batch = FactBatch(appId: app.id, receivedAt: now, environment: environment, ownership: .existingOwner)
        batch.transactions = facts.transactions.map {
            NewTransaction(appId: app.id, jws: $0.jws, fact: $0.fact, source: "poll", receivedAt: now)
        }
        batch.renewals = facts.renewals.map {
            NewRenewalInfo(appId: app.id, jws: $0.jws, fact: $0.fact, source: "poll", receivedAt: now)
        }
        batch.appAccountTokens = facts.appAccountTokens.sorted()
        return try await writer.commit(batch, operation: "poll_status").outcome
    }
}

extension PurchaseIngestor {
    /// Get All Subscription Statuses for `transactionId`, every signed item verified.
    func statuses(
        app: AppRuntime, environment: AppStoreEnvironment, transactionId: String,
        via connection: any AppStoreConnection
    ) async throws(IngestionError) -> Facts {
        var facts = Facts()
        let states = try await call(app) { () async throws(AppStoreClientError) in
            try await connection.subscriptionStatuses(transactionId: transactionId)
        }
        for state in states {
            if let signed = state.signedTransactionInfo {
                try facts.append(
                    try verifyFromApple(app, environment) { (verifier) throws(TrustError) in
                        try verifier.verifyAndDecodeTransaction(signed)
                    }, source: "api")
            }
            if let signed = state.signedRenewalInfo {
                let verified = try verifyFromApple(app, environment) { (verifier) throws(TrustError) in
                    try verifier.verifyAndDecodeRenewalInfo(signed)
                }
                guard let fact = try? RenewalFact(verified.payload) else {
                    throw IngestionError.appStoreDataIncomplete
                }
                facts.renewals.append((jws: verified.jws, fact: fact, source: "api"))
            }
        }
        return facts
    }

    /// Get Transaction History for `transactionId`, every item verified.
    func history(
        app: AppRuntime, environment: AppStoreEnvironment, transactionId: String,
        via connection: any AppStoreConnection
    ) async throws(IngestionError) -> Facts {
        var facts = Facts()
        let history = try await call(app) { () async throws(AppStoreClientError) in
            try await connection.transactionHistory(transactionId: transactionId)
        }
        for signed in history {
            try facts.append(
                try verifyFromApple(app, environment) { (verifier) throws(TrustError) in
                    try verifier.verifyAndDecodeTransaction(signed)
                }, source: "api")
        }
        return facts
    }
}
