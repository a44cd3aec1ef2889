import AppStoreClient
import AppStoreModels
import AppStoreTrust
import Entitlements
import Foundation
import HTTPServer
import Storage

/// Ingests what an app (or its backend) posts for one of its users: a StoreKit 2 signed
/// transaction, a transaction id, a StoreKit 1 app receipt, or a restore request.
///
/// Everything is verified with the app's verifier, then completed from the App Store Server API
/// through the injected `AppStoreConnection` (all subscription statuses and the transaction
/// history), then stored in one `store.write` that claims the original transactions for the
/// customer under the app's transfer policy and re-evaluates every customer it touched.
/// - Note: Immutable and `Sendable`.
public struct PurchaseIngestor: Sendable {
    let store: any Store
    let verifiers: AppVerifiers
    let metrics: ServerMetrics
    let clock: ServerClock
    let connections: AppStoreConnectionFactory

    public init(
        store: any Store, verifiers: AppVerifiers, metrics: ServerMetrics, clock: ServerClock,
        connections: @escaping AppStoreConnectionFactory
    ) {
        self.store = store
        self.verifiers = verifiers
        self.metrics = metrics
        self.clock = clock
        self.connections = connections
    }

    /// Verified facts about to be stored.
    struct Facts: Sendable {
        var transactions: [NewTransactionInput] = []
        var renewals: [NewRenewalInput] = []
        var appAccountTokens: Set<String> = []

        mutating func merge(_ other: Facts) {
            transactions += other.transactions
            renewals += other.renewals
            appAccountTokens.formUnion(other.appAccountTokens)
        }

        var originalTransactionIds: [String] {
            Array(Set(transactions.map(\.fact.originalTransactionId) + renewals.map(\.fact.originalTransactionId)))
                .sorted()
        }
    }

    struct NewTransactionInput: Sendable {
        var jws: String?
        var fact: TransactionFact
        var source: String
    }

    struct NewRenewalInput: Sendable {
        var jws: String?
        var fact: RenewalFact
        var source: String
    }

    // MARK: Routes

    /// `{"signedTransaction": JWS}` or `{"transactionId": "…"}`.
    public func postTransaction(
        app: AppRecord, appUserId: String, signedTransaction: String?, transactionId: String?,
        environment requested: AppStoreEnvironment?
    ) async throws -> CustomerInfo {
        var facts = Facts()
        let environment: AppStoreEnvironment
        let completeFrom: String
        if let signedTransaction {
            let claimed = Self.claimedTransactionEnvironment(signedTransaction)
            environment = try chooseEnvironment(app, claimed ?? requested)
            let verified: Verified<JWSTransactionDecodedPayload>
            do {
                verified = try verifiers.verifier(for: app, environment: environment)
                    .verifyAndDecodeTransaction(signedTransaction)
            } catch {
                metrics.recordVerificationFailure(rule: error.rule.rawValue)
                throw ErrorMapping.trustFailure(error)
            }
            try facts.append(verified, source: "client")
            completeFrom = verified.payload.transactionId ?? ""
        } else if let transactionId {
            guard Self.isTransactionId(transactionId) else {
                throw HTTPError.badRequest("transactionId must be 1 to 64 digits.", code: "invalid_body")
            }
            environment = try chooseEnvironment(app, requested)
            completeFrom = transactionId
        } else {
            throw HTTPError.badRequest("Send signedTransaction or transactionId.", code: "invalid_body")
        }
        if let connection = try connection(app, environment, required: signedTransaction == nil) {
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
                    try await complete(
                        app: app, environment: environment, transactionId: completeFrom, via: connection))
            } catch let error as HTTPError where signedTransaction != nil && error == Self.notConfigured {
                // A connection with only a shared secret (verifyReceipt) cannot complete the
                // picture; the verified signed transaction stands on its own, as with no connection.
            }
        }
        return try await save(facts, app: app, appUserId: appUserId, environment: environment, receipt: nil)
    }

    /// `{"receipt": base64}`: the receipt's transactions through the App Store Server API, or
    /// through verifyReceipt when the app is configured for the legacy flow.
    public func postReceipt(
        app: AppRecord, appUserId: String, receipt: String, environment requested: AppStoreEnvironment?
    ) async throws -> CustomerInfo {
        let settings = AppSettings(record: app.settings)
        guard !receipt.isEmpty, receipt.utf8.count <= AppReceipt.maximumSize * 2 else {
            throw HTTPError.badRequest("receipt must be a base64 app receipt.", code: "invalid_body")
        }
        if settings.legacyReceiptFlow {
            let environment = try chooseEnvironment(app, requested)
            guard let connection = try connection(app, environment, required: true) else { throw Self.notConfigured }
            let answer = try await call { () async throws(AppStoreClientError) in
                try await connection.verifyReceipt(receipt)
            }
            guard app.environments.contains(answer.environment) else {
                throw HTTPError.badRequest(
                    "The receipt is from an environment the app does not accept.", code: "receipt_invalid")
            }
            if let bundle = answer.response.receipt?.bundleId, bundle != app.bundleId {
                throw HTTPError.badRequest("The receipt belongs to another app.", code: "receipt_invalid")
            }
            let now = clock.now()
            var facts = Facts()
            let entries = (answer.response.latestReceiptInfo ?? []) + (answer.response.receipt?.inApp ?? [])
            for fact in LegacyFactMapping.transactions(entries, environment: answer.environment, observedAt: now) {
                facts.transactions.append(NewTransactionInput(jws: nil, fact: fact, source: "receipt"))
            }
            for fact in LegacyFactMapping.renewals(
                answer.response.pendingRenewalInfo ?? [], environment: answer.environment, observedAt: now)
            {
                facts.renewals.append(NewRenewalInput(jws: nil, fact: fact, source: "receipt"))
            }
            let record = ReceiptRecord(
                receiptData: receipt,
                responseBody: String(decoding: AppStoreJSON.encode(answer.response), as: UTF8.self))
            return try await save(
                facts, app: app, appUserId: appUserId, environment: answer.environment, receipt: record)
        }
        let parsed: AppReceipt
        do {
            parsed = try AppReceipt(base64OrDER: Array(receipt.utf8))
            let roots = try AppSettings(record: app.settings).rootCertificatesPEM.map {
                (pem) throws(TrustError) in try Certificate(derOrPEM: Array(pem.utf8))
            }
            // At the receipt's creation date, as Apple's receipts are meant to be checked: the
            // signing certificate may have expired since, the signature over the date has not.
            _ = try parsed.verifySignature(roots: roots)
        } catch {
            metrics.recordVerificationFailure(rule: error.rule.rawValue)
            throw ErrorMapping.trustFailure(error)
        }
        guard parsed.bundleId == app.bundleId else {
            metrics.recordVerificationFailure(rule: TrustRule.bundleIdMismatch.rawValue)
            throw ErrorMapping.trustFailure(TrustError(.bundleIdMismatch, "receipt bundle id does not match"))
        }
        let environment = try chooseEnvironment(app, requested)
        guard let connection = try connection(app, environment, required: true) else { throw Self.notConfigured }
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
        let record = ReceiptRecord(receiptData: receipt, responseBody: nil)
        return try await save(facts, app: app, appUserId: appUserId, environment: environment, receipt: record)
    }

    /// Re-fetches everything Apple knows for the customer's original transactions.
    public func restore(app: AppRecord, appUserId: String, environment requested: AppStoreEnvironment?) async throws
        -> CustomerInfo
    {
        let environment = try chooseEnvironment(app, requested)
        let appId = app.id
        let customer = try await read { reader in try reader.customer(appId: appId, knownAs: appUserId) }
        guard let customer else {
            throw HTTPError(status: .notFound, code: "customer_not_found", message: "No such customer.")
        }
        guard let connection = try connection(app, environment, required: true) else { throw Self.notConfigured }
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
        app: AppRecord, environment: AppStoreEnvironment, transactionId: String, via connection: any AppStoreConnection
    ) async throws -> Facts {
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
                do {
                    facts.renewals.append(
                        NewRenewalInput(jws: verified.jws, fact: try RenewalFact(verified.payload), source: "api"))
                } catch {
                    throw Self.incomplete
                }
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
        _ app: AppRecord, _ environment: AppStoreEnvironment,
        _ body: (SignedDataVerifier) throws(TrustError) -> Verified<T>
    ) throws -> Verified<T> {
        do {
            return try body(try verifiers.verifier(for: app, environment: environment))
        } catch {
            metrics.recordVerificationFailure(rule: error.rule.rawValue)
            if error.category == .retryableVerificationFailure { throw ErrorMapping.trustFailure(error) }
            throw HTTPError(
                status: .badGateway, code: "app_store_data_rejected",
                message: "Data from the App Store failed verification (\(error.rule.rawValue)).")
        }
    }

    private func call<R: Sendable>(_ body: () async throws(AppStoreClientError) -> R) async throws -> R {
        do {
            return try await body()
        } catch {
            throw ErrorMapping.appStoreFailure(error)
        }
    }

    // MARK: Storing

    struct ReceiptRecord: Sendable {
        var receiptData: String
        var responseBody: String?
    }

    private func save(
        _ facts: Facts, app: AppRecord, appUserId: String, environment: AppStoreEnvironment, receipt: ReceiptRecord?
    ) async throws -> CustomerInfo {
        let now = clock.now()
        let appId = app.id
        let policy = AppSettings(record: app.settings).transferPolicy
        return try await write("ingest_purchase") { transaction in
            let customer = try CustomerIdentity.resolve(appId: appId, appUserId: appUserId, in: transaction, now: now)
            for token in facts.appAccountTokens.sorted() {
                do {
                    try transaction.addAppAccountToken(token, customerId: customer.id, at: now)
                } catch let error as StoreError where error.code == .duplicate {
                    // The token already names another customer: the first link stands.
                }
            }
            if let receipt {
                _ = try transaction.insertReceiptValidation(
                    NewReceiptValidation(
                        appId: appId, customerId: customer.id, environment: environment,
                        receiptData: receipt.receiptData, responseBody: receipt.responseBody, receivedAt: now))
            }
            for input in facts.transactions {
                _ = try transaction.insertTransaction(
                    NewTransaction(
                        appId: appId, jws: input.jws, fact: input.fact, source: input.source, receivedAt: now))
            }
            for input in facts.renewals {
                _ = try transaction.insertRenewalInfo(
                    NewRenewalInfo(
                        appId: appId, jws: input.jws, fact: input.fact, source: input.source, receivedAt: now))
            }
            var others: [Int64: CustomerRecord] = [:]
            var transfers: [LifecycleEvent] = []
            for originalTransactionId in facts.originalTransactionIds {
                switch try CustomerIdentity.claim(
                    originalTransactionId, for: customer, policy: policy, in: transaction, now: now)
                {
                case .transferred(let previous):
                    others[previous.id] = previous
                    let fact = facts.transactions.first { $0.fact.originalTransactionId == originalTransactionId }?.fact
                    transfers.append(
                        CustomerIdentity.transferEvent(
                            originalTransactionId, productId: fact?.productId ?? "",
                            environment: fact?.environment ?? environment, from: previous, to: customer,
                            catalog: try transaction.catalog(appId: appId), at: now))
                case .claimed, .alreadyOwned, .keptBy, .shared: break
                }
            }
            if !transfers.isEmpty {
                let appended = try transaction.appendEvents(transfers, customerId: customer.id, at: now)
                try transaction.enqueueDeliveries(of: appended, appId: appId, at: now)
            }
            let current = try transaction.lockCustomer(id: customer.id)
            let environments = CustomerStateUpdater.environments(
                of: facts.transactions.map { .transaction($0.fact) }, also: environment)
            var result: CustomerInfo?
            for each in environments {
                let outcome = try CustomerStateUpdater.update(
                    customer: current, environment: each, in: transaction, now: now)
                if each == environment { result = outcome.info }
            }
            for previous in others.values.sorted(by: { $0.id < $1.id }) {
                let locked = try transaction.lockCustomer(id: previous.id)
                for each in environments {
                    try CustomerStateUpdater.update(customer: locked, environment: each, in: transaction, now: now)
                }
            }
            return result!
        }
    }

    private func write<R: Sendable>(_ operation: String, _ body: @escaping @Sendable (any StoreTransaction) throws -> R)
        async throws -> R
    {
        do {
            return try await timed(metrics, operation) { try await store.write(retries: 2, body) }
        } catch {
            throw ErrorMapping.storeFailure(error)
        }
    }

    private func read<R: Sendable>(_ body: @escaping @Sendable (any StoreReader) throws -> R) async throws -> R {
        do {
            return try await timed(metrics, "read") { try await store.read(body) }
        } catch {
            throw ErrorMapping.storeFailure(error)
        }
    }

    // MARK: Helpers

    private func connection(_ app: AppRecord, _ environment: AppStoreEnvironment, required: Bool) throws
        -> (any AppStoreConnection)?
    {
        let made: (any AppStoreConnection)?
        do {
            made = try connections(app, AppSettings(record: app.settings), environment)
        } catch {
            throw HTTPError(
                status: .conflict, code: "app_store_not_configured",
                message: "The app's App Store Connect configuration cannot be used.")
        }
        if made == nil && required { throw Self.notConfigured }
        return made
    }

    static let notConfigured = HTTPError(
        status: .conflict, code: "app_store_not_configured",
        message: "The app has no App Store Connect key (or shared secret) configured.")

    static let incomplete = HTTPError(
        status: .badGateway, code: "app_store_data_incomplete", message: "The App Store sent an incomplete payload.")

    private func chooseEnvironment(_ app: AppRecord, _ wanted: AppStoreEnvironment?) throws -> AppStoreEnvironment {
        if let wanted {
            guard app.environments.contains(wanted) else {
                throw HTTPError.badRequest(
                    "The app does not accept the \(wanted.rawValue) environment.", code: "environment_not_accepted")
            }
            return wanted
        }
        guard let first = app.environments.first else {
            throw HTTPError(status: .conflict, code: "app_not_configured", message: "The app accepts no environment.")
        }
        return first
    }

    static func claimedTransactionEnvironment(_ jws: String) -> AppStoreEnvironment? {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64URL.decode(parts[1]),
            let payload = try? AppStoreJSON.decode(JWSTransactionDecodedPayload.self, from: Data(bytes))
        else { return nil }
        return payload.environment?.value
    }

    static func isTransactionId(_ value: String) -> Bool {
        (1...64).contains(value.utf8.count) && value.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }
}

extension PurchaseIngestor.Facts {
    mutating func append(_ verified: Verified<JWSTransactionDecodedPayload>, source: String) throws {
        do {
            transactions.append(
                PurchaseIngestor.NewTransactionInput(
                    jws: verified.jws, fact: try TransactionFact(verified.payload), source: source))
        } catch {
            throw HTTPError.badRequest("The transaction lacks fields the engine needs.", code: "invalid_transaction")
        }
        if let token = verified.payload.appAccountToken { appAccountTokens.insert(token.uuidString.lowercased()) }
    }
}
