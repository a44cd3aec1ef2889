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
/// - Note: Immutable and `Sendable`.
public struct PurchaseIngestor: Sendable {
    let writer: IngestionWriter
    let metrics: any IngestionMetrics
    let clock: ServerClock

    public init(writer: IngestionWriter, metrics: any IngestionMetrics, clock: ServerClock) {
        self.writer = writer
        self.metrics = metrics
        self.clock = clock
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
    }

    // MARK: Sources

    /// A StoreKit 2 signed transaction, or a transaction id looked up through the App Store
    /// Server API; either way completed from Apple when the app has a connection.
    public func postTransaction(
        app: AppRuntime, appUserId: String, signedTransaction: String?, transactionId: String?,
        environment requested: AppStoreEnvironment?
    ) async throws(IngestionError) -> CustomerInfo {
        var facts = Facts()
        let environment: AppStoreEnvironment
        let completeFrom: String
        if let signedTransaction {
            environment = try app.environment(
                UnverifiedJWS.claimedEnvironment(ofTransaction: signedTransaction) ?? requested)
            let verified: Verified<JWSTransactionDecodedPayload>
            do {
                verified = try app.verifier(for: environment).verifyAndDecodeTransaction(signedTransaction)
            } catch {
                metrics.recordVerificationFailure(rule: error.rule.rawValue)
                throw IngestionError.trust(error)
            }
            try facts.append(verified, source: "client")
            completeFrom = verified.payload.transactionId ?? ""
        } else if let transactionId {
            guard Self.isTransactionId(transactionId) else {
                throw IngestionError.invalidBody("transactionId must be 1 to 64 digits.")
            }
            environment = try app.environment(requested)
            completeFrom = transactionId
        } else {
            throw IngestionError.invalidBody("Send signedTransaction or transactionId.")
        }
        if let connection = try app.connection(environment, required: signedTransaction == nil) {
            if signedTransaction == nil {
                let signed = try await call { () async throws(AppStoreClientError) in
                    try await connection.transactionInfo(transactionId: completeFrom)
                }
                try facts.append(
                    try verifyFromApple(app, environment) { (verifier) throws(TrustError) in
                        try verifier.verifyAndDecodeTransaction(signed)
                    }, source: "api")
            }
            do {
                facts.merge(
                    try await complete(app: app, environment: environment, transactionId: completeFrom, via: connection)
                )
            } catch let error where signedTransaction != nil && error == .appStoreNotConfigured {
                // A connection with only a shared secret (verifyReceipt) cannot complete the
                // picture; the verified signed transaction stands on its own, as with no connection.
            }
        }
        return try await save(facts, app: app, appUserId: appUserId, environment: environment, receipt: nil)
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
                throw IngestionError.appStoreNotConfigured
            }
            let answer = try await call { () async throws(AppStoreClientError) in
                try await connection.verifyReceipt(receipt)
            }
            guard app.record.environments.contains(answer.environment) else {
                throw IngestionError(
                    .receiptInvalid, "The receipt is from an environment the app does not accept.")
            }
            if let bundle = answer.response.receipt?.bundleId, bundle != app.record.bundleId {
                throw IngestionError(.receiptInvalid, "The receipt belongs to another app.")
            }
            let now = clock.now()
            var facts = Facts()
            let entries = (answer.response.latestReceiptInfo ?? []) + (answer.response.receipt?.inApp ?? [])
            for fact in LegacyFactMapping.transactions(entries, environment: answer.environment, observedAt: now) {
                facts.transactions.append((jws: nil, fact: fact, source: "receipt"))
            }
            for fact in LegacyFactMapping.renewals(
                answer.response.pendingRenewalInfo ?? [], environment: answer.environment, observedAt: now)
            {
                facts.renewals.append((jws: nil, fact: fact, source: "receipt"))
            }
            let record = FactBatch.Receipt(
                receiptData: receipt,
                responseBody: String(decoding: AppStoreJSON.encode(answer.response), as: UTF8.self))
            return try await save(
                facts, app: app, appUserId: appUserId, environment: answer.environment, receipt: record)
        }
        let parsed: AppReceipt
        do {
            parsed = try AppReceipt(base64OrDER: Array(receipt.utf8))
            let roots = try app.settings.rootCertificatesPEM.map {
                (pem) throws(TrustError) in try Certificate(derOrPEM: Array(pem.utf8))
            }
            // At the receipt's creation date, as Apple's receipts are meant to be checked: the
            // signing certificate may have expired since, the signature over the date has not.
            _ = try parsed.verifySignature(roots: roots)
        } catch {
            metrics.recordVerificationFailure(rule: error.rule.rawValue)
            throw IngestionError.trust(error)
        }
        guard parsed.bundleId == app.record.bundleId else {
            metrics.recordVerificationFailure(rule: TrustRule.bundleIdMismatch.rawValue)
            throw IngestionError.trust(TrustError(.bundleIdMismatch, "receipt bundle id does not match"))
        }
        let environment = try app.environment(requested)
        guard let connection = try app.connection(environment, required: true) else {
            throw IngestionError.appStoreNotConfigured
        }
        var byOriginal: [String: String] = [:]
        for purchase in parsed.inAppPurchases {
            guard let transactionId = purchase.transactionId else { continue }
            byOriginal[purchase.originalTransactionId ?? transactionId] = transactionId
        }
        var facts = Facts()
        for transactionId in byOriginal.values.sorted() {
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
            throw IngestionError.appStoreNotConfigured
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
        var facts = Facts()
        let states = try await call { () async throws(AppStoreClientError) in
            try await connection.subscriptionStatuses(transactionId: transactionId)
        }
        let history = try await call { () async throws(AppStoreClientError) in
            try await connection.transactionHistory(transactionId: transactionId)
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
        for signed in history {
            try facts.append(
                try verifyFromApple(app, environment) { (verifier) throws(TrustError) in
                    try verifier.verifyAndDecodeTransaction(signed)
                }, source: "api")
        }
        return facts
    }

    private func verifyFromApple<T>(
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

    private func call<R: Sendable>(_ body: () async throws(AppStoreClientError) -> R) async throws(IngestionError)
        -> R
    {
        do {
            return try await body()
        } catch {
            throw IngestionError.appStore(error)
        }
    }

    // MARK: Storing

    private func save(
        _ facts: Facts, app: AppRuntime, appUserId: String, environment: AppStoreEnvironment,
        receipt: FactBatch.Receipt?
    ) async throws(IngestionError) -> CustomerInfo {
        let now = clock.now()
        let appId = app.id
        var batch = FactBatch(
            appId: appId, receivedAt: now, environment: environment,
            ownership: .claim(appUserId: appUserId, policy: app.settings.transferPolicy))
        batch.transactions = facts.transactions.map {
            NewTransaction(appId: appId, jws: $0.jws, fact: $0.fact, source: $0.source, receivedAt: now)
        }
        batch.renewals = facts.renewals.map {
            NewRenewalInfo(appId: appId, jws: $0.jws, fact: $0.fact, source: $0.source, receivedAt: now)
        }
        batch.appAccountTokens = facts.appAccountTokens.sorted()
        batch.receipt = receipt
        let commit = try await writer.commit(batch, operation: "ingest_purchase")
        return commit.customerInfo ?? CustomerInfo(customerId: appUserId, environment: environment, evaluatedAt: now)
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
