import AppStoreClient
import AppStoreModels
import AppStoreTrust
import Entitlements
import Foundation
import Storage

/// Ingests what an app (or its backend) posts for one of its users: a StoreKit 2 signed
/// transaction, a transaction id, a StoreKit 1 app receipt, or a restore request.
///
/// Everything is verified with the app's verifier, then completed from the App Store Server API
/// through the app's `AppStoreConnection` (all subscription statuses and the transaction
/// history), then committed as one `FactBatch` whose customer claims the original transactions
/// under the app's transfer policy.
///
/// A signed transaction is authoritative once verified: Apple is given `completionWait` to
/// complete it; if Apple is unreachable, slow or refuses, the transaction is stored and grants
/// at once, and a `purchase_completion` job (`PurchaseCompletion`) completes it later.
/// - Note: Immutable and `Sendable`.
public struct PurchaseIngestor: Sendable {
    let writer: IngestionWriter
    let metrics: any IngestionMetrics
    let clock: ServerClock
    /// How long a posted signed transaction waits for Apple's statuses and history before it is
    /// answered without them (`.zero`: always complete in the background). Real time: it
    /// bounds a network wait, not a business instant.
    let completionWait: Duration

    public init(
        writer: IngestionWriter, metrics: any IngestionMetrics, clock: ServerClock,
        completionWait: Duration = .seconds(2)
    ) {
        self.writer = writer
        self.metrics = metrics
        self.clock = clock
        self.completionWait = completionWait
    }

    /// Verified facts about to be stored.
    struct Facts: Sendable {
        var transactions: [(jws: String?, fact: TransactionFact, source: String)] = []
        var renewals: [(jws: String?, fact: RenewalFact, source: String)] = []
        var appAccountTokens: Set<String> = []

        mutating func merge(_ other: Facts) {
            transactions += other.transactions
            renewals += other.renewals
            appAccountTokens.formUnion(other.appAccountTokens)
        }

        /// `merge`, leaving out what is already here (the same signed payload, or the same
        /// transaction id): two answers about one Apple account overlap.
        mutating func mergeUnique(_ other: Facts) {
            var transactionIds = Set(transactions.map(\.fact.transactionId))
            for item in other.transactions where transactionIds.insert(item.fact.transactionId).inserted {
                transactions.append(item)
            }
            var renewalPayloads = Set(renewals.compactMap(\.jws))
            for item in other.renewals where item.jws.map({ renewalPayloads.insert($0).inserted }) ?? true {
                renewals.append(item)
            }
            appAccountTokens.formUnion(other.appAccountTokens)
        }
    }

    // MARK: Sources

    /// A StoreKit 2 signed transaction, or a transaction id looked up through the App Store
    /// Server API; either way completed from Apple when the app has an App Store Connect key.
    ///
    /// A signed transaction never waits on Apple longer than `completionWait` and never fails
    /// because of Apple: see `PostedTransaction.Completion`. A bare transaction id has nothing
    /// to stand on without Apple, so Apple's failures are its answer.
    public func postTransaction(
        app: AppRuntime, appUserId: String, signedTransaction: String?, transactionId: String?,
        environment requested: AppStoreEnvironment?
    ) async throws(IngestionError) -> PostedTransaction {
        guard let signedTransaction else {
            guard let transactionId else {
                throw IngestionError.invalidBody("Send signedTransaction or transactionId.")
            }
            return try await postTransactionId(
                app: app, appUserId: appUserId, transactionId: transactionId, environment: requested)
        }
        var facts = Facts()
        let environment = try app.environment(
            UnverifiedJWS.claimedEnvironment(ofTransaction: signedTransaction) ?? requested)
        let verified: Verified<JWSTransactionDecodedPayload>
        do {
            verified = try app.verifier(for: environment).verifyAndDecodeTransaction(signedTransaction)
        } catch {
            metrics.recordVerificationFailure(rule: error.rule.rawValue)
            throw IngestionError.trust(error)
        }
        try facts.append(verified, source: "client")
        let transactionId = verified.payload.transactionId ?? ""
        guard let connection = try app.connection(environment, required: false) else {
            return try await answer(facts, .skipped, app: app, appUserId: appUserId, environment: environment)
        }
        switch await complete(
            within: completionWait, app: app, environment: environment, transactionId: transactionId, via: connection)
        {
        case .completed(let more):
            facts.merge(more)
            return try await answer(facts, .complete, app: app, appUserId: appUserId, environment: environment)
        case .failed(let error) where error == app.missingAppStoreKey:
            // A connection with only a shared secret (verifyReceipt) cannot complete the
            // picture; the verified signed transaction stands on its own, as with no connection.
            return try await answer(facts, .skipped, app: app, appUserId: appUserId, environment: environment)
        case .failed, .timedOut:
            let payload = PurchaseCompletion.Payload(
                appId: app.id, environment: environment, transactionId: transactionId, appUserId: appUserId)
            // One job per posted payload: the same JWS posted twice queues one completion.
            let job = FactBatch.Job(
                kind: PurchaseCompletion.kind, payload: AppStoreJSON.encodeText(payload),
                dedupeKey: "\(PurchaseCompletion.kind):\(app.id):\(environment.rawValue):\(transactionId):"
                    + String(verified.payload.signedDate?.millisecondsSince1970 ?? 0))
            return try await answer(
                facts, .pending, app: app, appUserId: appUserId, environment: environment, jobs: [job])
        }
    }

    /// A transaction id: Get Transaction Info, then statuses and history, all from Apple.
    private func postTransactionId(
        app: AppRuntime, appUserId: String, transactionId: String, environment requested: AppStoreEnvironment?
    ) async throws(IngestionError) -> PostedTransaction {
        guard Self.isTransactionId(transactionId) else {
            throw IngestionError.invalidBody("transactionId must be 1 to 64 digits.")
        }
        let environment = try app.environment(requested)
        guard let connection = try app.connection(environment, required: true) else { throw app.missingAppStoreKey }
        var facts = Facts()
        let signed = try await call(app) { () async throws(AppStoreClientError) in
            try await connection.transactionInfo(transactionId: transactionId)
        }
        try facts.append(
            try verifyFromApple(app, environment) { (verifier) throws(TrustError) in
                try verifier.verifyAndDecodeTransaction(signed)
            }, source: "api")
        facts.merge(
            try await complete(app: app, environment: environment, transactionId: transactionId, via: connection))
        return try await answer(facts, .complete, app: app, appUserId: appUserId, environment: environment)
    }

    private func answer(
        _ facts: Facts, _ completion: PostedTransaction.Completion, app: AppRuntime, appUserId: String,
        environment: AppStoreEnvironment, jobs: [FactBatch.Job] = []
    ) async throws(IngestionError) -> PostedTransaction {
        let info = try await save(
            facts, app: app, appUserId: appUserId, environment: environment, receipt: nil, jobs: jobs)
        metrics.recordPurchaseCompletion(outcome: completion.rawValue)
        return PostedTransaction(customerInfo: info, completion: completion)
    }

    /// A base64 app receipt: its transactions through the App Store Server API, or through
    /// verifyReceipt when the app is configured for the legacy flow.
    public func postReceipt(
        app: AppRuntime, appUserId: String, receipt: String, environment requested: AppStoreEnvironment?
    ) async throws(IngestionError) -> CustomerInfo {
        guard !receipt.isEmpty, receipt.utf8.count <= AppReceipt.maximumSize * 2 else {
            throw IngestionError.invalidBody("receipt must be a base64 app receipt.")
        }
        if app.settings.legacyReceiptFlow {
            let environment = try app.environment(requested)
            guard let connection = try app.connection(environment, required: true) else {
                throw app.missingAppStoreKey
            }
            let answer = try await verifyReceipt(receipt, app: app, via: connection)
            let facts = legacyFacts(answer.response, environment: answer.environment)
            let record = FactBatch.Receipt(
                receiptData: receipt,
                responseBody: AppStoreJSON.encodeText(answer.response))
            return try await save(
                facts, app: app, appUserId: appUserId, environment: answer.environment, receipt: record)
        }
        let parsed = try verifyLocally(app: app, receipt: receipt)
        let environment = try app.environment(requested)
        guard let connection = try app.connection(environment, required: true) else {
            throw app.missingAppStoreKey
        }
        var facts = Facts()
        for transactionId in Self.transactionPerOriginal(parsed) {
            facts.merge(
                try await complete(app: app, environment: environment, transactionId: transactionId, via: connection))
        }
        let record = FactBatch.Receipt(receiptData: receipt, responseBody: nil)
        return try await save(facts, app: app, appUserId: appUserId, environment: environment, receipt: record)
    }

    /// Re-fetches everything Apple knows for the customer's original transactions.
    public func restore(app: AppRuntime, appUserId: String, environment requested: AppStoreEnvironment?)
        async throws(IngestionError) -> CustomerInfo
    {
        let environment = try app.environment(requested)
        let appId = app.id
        let customer: CustomerRecord?
        do {
            customer = try await metrics.timed("read") {
                try await writer.store.read { reader in try reader.customer(appId: appId, knownAs: appUserId) }
            }
        } catch {
            throw IngestionError.store(error)
        }
        guard let customer else { throw IngestionError.customerNotFound }
        guard let connection = try app.connection(environment, required: true) else {
            throw app.missingAppStoreKey
        }
        var facts = Facts()
        for originalTransactionId in customer.originalTransactionIds {
            facts.merge(
                try await complete(
                    app: app, environment: environment, transactionId: originalTransactionId, via: connection))
        }
        return try await save(facts, app: app, appUserId: appUserId, environment: environment, receipt: nil)
    }

    // MARK: Completion from the App Store Server API

    /// Statuses and history for `transactionId`, every item verified.
    func complete(
        app: AppRuntime, environment: AppStoreEnvironment, transactionId: String,
        via connection: any AppStoreConnection
    ) async throws(IngestionError) -> Facts {
        var facts = try await statuses(
            app: app, environment: environment, transactionId: transactionId, via: connection)
        facts.merge(
            try await history(app: app, environment: environment, transactionId: transactionId, via: connection))
        return facts
    }

    func verifyFromApple<T>(
        _ app: AppRuntime, _ environment: AppStoreEnvironment,
        _ body: (SignedDataVerifier) throws(TrustError) -> Verified<T>
    ) throws(IngestionError) -> Verified<T> {
        do {
            return try body(try app.verifier(for: environment))
        } catch {
            metrics.recordVerificationFailure(rule: error.rule.rawValue)
            if error.category == .retryableVerificationFailure { throw IngestionError.trust(error) }
            throw IngestionError(
                .appStoreDataRejected, "Data from the App Store failed verification (\(error.rule.rawValue)).",
                rule: error.rule.rawValue)
        }
    }

    func call<R: Sendable>(_ app: AppRuntime, _ body: () async throws(AppStoreClientError) -> R)
        async throws(IngestionError) -> R
    {
        do {
            return try await body()
        } catch {
            // The connection lacks the API client: say so for this app (see `missingAppStoreKey`).
            if error.code == .invalidConfiguration { throw app.missingAppStoreKey }
            throw IngestionError.appStore(error)
        }
    }

    /// What an inline completion came to.
    enum InlineCompletion: Sendable {
        case completed(Facts)
        case failed(IngestionError)
        case timedOut
    }

    /// `complete`, given at most `wait`: when the time is up the answer is `timedOut` and the
    /// call is cancelled without being awaited (a request queued behind the client's in-flight
    /// limit cannot be cancelled, and must not hold the purchase's answer).
    func complete(
        within wait: Duration, app: AppRuntime, environment: AppStoreEnvironment, transactionId: String,
        via connection: any AppStoreConnection
    ) async -> InlineCompletion {
        guard wait > .zero else { return .timedOut }
        let first = FirstAnswer<InlineCompletion>()
        let work = Task {
            do throws(IngestionError) {
                first.offer(
                    .completed(
                        try await complete(
                            app: app, environment: environment, transactionId: transactionId, via: connection)))
            } catch {
                first.offer(.failed(error))
            }
        }
        let timer = Task {
            // Cancelled once the answer is in; only a full wait offers `timedOut`.
            guard (try? await Task.sleep(for: wait)) != nil else { return }
            first.offer(.timedOut)
        }
        let answer = await first.value()
        work.cancel()
        timer.cancel()
        return answer
    }

    /// Applies a `purchase_completion` job: Apple's statuses and history for the posted
    /// transaction, committed with the job's completion under `lease`.
    func applyCompletion(_ payload: PurchaseCompletion.Payload, app: AppRuntime, lease: JobLease)
        async throws(IngestionError)
    {
        let environment = try app.environment(payload.environment)
        guard let connection = try app.connection(environment, required: true) else { throw app.missingAppStoreKey }
        let facts = try await complete(
            app: app, environment: environment, transactionId: payload.transactionId, via: connection)
        let now = clock.now()
        var batch = FactBatch(
            appId: app.id, receivedAt: now, environment: environment,
            ownership: .completion(appUserId: payload.appUserId))
        batch.transactions = facts.transactions.map {
            NewTransaction(appId: app.id, jws: $0.jws, fact: $0.fact, source: $0.source, receivedAt: now)
        }
        batch.renewals = facts.renewals.map {
            NewRenewalInfo(appId: app.id, jws: $0.jws, fact: $0.fact, source: $0.source, receivedAt: now)
        }
        batch.appAccountTokens = facts.appAccountTokens.sorted()
        batch.completesJob = lease
        _ = try await writer.commit(batch, operation: "complete_purchase")
    }

    // MARK: Storing

    private func save(
        _ facts: Facts, app: AppRuntime, appUserId: String, environment: AppStoreEnvironment,
        receipt: FactBatch.Receipt?, jobs: [FactBatch.Job] = []
    ) async throws(IngestionError) -> CustomerInfo {
        let commit = try await commitFacts(
            facts, app: app, appUserId: appUserId, environment: environment, receipt: receipt, jobs: jobs)
        return commit.customerInfo
            ?? CustomerInfo(customerId: appUserId, environment: environment, evaluatedAt: clock.now())
    }

    /// The facts claimed by `appUserId`, through the one commit path.
    func commitFacts(
        _ facts: Facts, app: AppRuntime, appUserId: String, environment: AppStoreEnvironment,
        receipt: FactBatch.Receipt?, jobs: [FactBatch.Job] = [], backfillLine: FactBatch.BackfillLineMark? = nil,
        policy: TransferPolicy? = nil
    ) async throws(IngestionError) -> FactCommit {
        let now = clock.now()
        let appId = app.id
        var batch = FactBatch(
            appId: appId, receivedAt: now, environment: environment,
            ownership: .claim(appUserId: appUserId, policy: policy ?? app.settings.transferPolicy))
        batch.transactions = facts.transactions.map {
            NewTransaction(appId: appId, jws: $0.jws, fact: $0.fact, source: $0.source, receivedAt: now)
        }
        batch.renewals = facts.renewals.map {
            NewRenewalInfo(appId: appId, jws: $0.jws, fact: $0.fact, source: $0.source, receivedAt: now)
        }
        batch.appAccountTokens = facts.appAccountTokens.sorted()
        batch.receipt = receipt
        batch.jobs = jobs
        batch.backfillLine = backfillLine
        return try await writer.commit(batch, operation: "ingest_purchase")
    }

    // MARK: Receipts

    /// A base64 (or DER) app receipt, parsed and its signature checked against the app's roots
    /// at the receipt's creation date, as Apple's receipts are meant to be checked (the signing
    /// certificate may have expired since, the signature over the date has not); it must be
    /// the app's.
    func verifyLocally(app: AppRuntime, receipt: String) throws(IngestionError) -> AppReceipt {
        let parsed: AppReceipt
        do {
            parsed = try AppReceipt(base64OrDER: Array(receipt.utf8))
            let roots = try app.settings.rootCertificatesPEM.map {
                (pem) throws(TrustError) in try Certificate(derOrPEM: Array(pem.utf8))
            }
            _ = try parsed.verifySignature(roots: roots)
        } catch {
            metrics.recordVerificationFailure(rule: error.rule.rawValue)
            throw IngestionError.trust(error)
        }
        guard parsed.bundleId == app.record.bundleId else {
            metrics.recordVerificationFailure(rule: TrustRule.bundleIdMismatch.rawValue)
            throw IngestionError.trust(TrustError(.bundleIdMismatch, "receipt bundle id does not match"))
        }
        return parsed
    }

    /// One transaction id per original transaction of the receipt (the last listed), sorted:
    /// the ids Apple is asked with, in turn, until one is known (`AppleAccountReadPlan.receipt`).
    static func transactionPerOriginal(_ receipt: AppReceipt) -> [String] {
        var byOriginal: [String: String] = [:]
        for purchase in receipt.inAppPurchases {
            guard let transactionId = purchase.transactionId else { continue }
            byOriginal[purchase.originalTransactionId ?? transactionId] = transactionId
        }
        return byOriginal.values.sorted()
    }

    /// verifyReceipt (production, then sandbox on 21007), the answer checked to be the app's in
    /// an environment it accepts.
    func verifyReceipt(_ receipt: String, app: AppRuntime, via connection: any AppStoreConnection)
        async throws(IngestionError) -> (environment: AppStoreEnvironment, response: VerifyReceiptResponseBody)
    {
        let answer = try await call(app) { () async throws(AppStoreClientError) in
            try await connection.verifyReceipt(receipt)
        }
        guard app.record.environments.contains(answer.environment) else {
            throw IngestionError(.receiptInvalid, "The receipt is from an environment the app does not accept.")
        }
        if let bundle = answer.response.receipt?.bundleId, bundle != app.record.bundleId {
            throw IngestionError(.receiptInvalid, "The receipt belongs to another app.")
        }
        return answer
    }

    /// verifyReceipt's answer as facts: its latest receipt info and in-app entries, and the
    /// pending renewal infos.
    func legacyFacts(_ response: VerifyReceiptResponseBody, environment: AppStoreEnvironment) -> Facts {
        let now = clock.now()
        var facts = Facts()
        let entries = (response.latestReceiptInfo ?? []) + (response.receipt?.inApp ?? [])
        for fact in LegacyFactMapping.transactions(entries, environment: environment, observedAt: now) {
            facts.transactions.append((jws: nil, fact: fact, source: "receipt"))
        }
        for fact in LegacyFactMapping.renewals(
            response.pendingRenewalInfo ?? [], environment: environment, observedAt: now)
        {
            facts.renewals.append((jws: nil, fact: fact, source: "receipt"))
        }
        return facts
    }

    static func isTransactionId(_ value: String) -> Bool {
        (1...64).contains(value.utf8.count) && value.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }
}

extension PurchaseIngestor.Facts {
    mutating func append(_ verified: Verified<JWSTransactionDecodedPayload>, source: String) throws(IngestionError) {
        guard let fact = try? TransactionFact(verified.payload) else {
            throw IngestionError(.invalidTransaction, "The transaction lacks fields the engine needs.")
        }
        transactions.append((jws: verified.jws, fact: fact, source: source))
        if let token = verified.payload.appAccountToken { appAccountTokens.insert(token.uuidString.lowercased()) }
    }
}
