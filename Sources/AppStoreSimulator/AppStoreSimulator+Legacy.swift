import AppStoreModels
import AppStoreTrust
import Foundation

/// StoreKit 1: app receipts signed by the simulator's CA, verifyReceipt with Apple's status
/// codes, and V1 notifications with `unified_receipt`.
extension AppStoreSimulator {
    /// A fresh PKCS#7 app receipt for the customer (DER), as the device would hold it now.
    public func appReceipt(customer: String, bundleId: String) throws(SimulatorError) -> [UInt8] {
        _ = try state.customer(customer)
        _ = try state.app(bundleId)
        let now = clock.now
        _ = state.appTransactionId(customer: customer, bundleId: bundleId, now: now)
        return try signReceipt(customer: customer, bundleId: bundleId, now: now)
    }

    private func signReceipt(customer: String, bundleId: String, now: Timestamp) throws(SimulatorError) -> [UInt8] {
        guard let builder = state.receiptBuilder(customer: customer, bundleId: bundleId, now: now) else {
            throw SimulatorError(.unknownApp, "no app \(bundleId)")
        }
        do {
            return try builder.signed(
                certificate: authority.leaf, key: authority.leafKey, chain: [authority.intermediate])
        } catch {
            throw SimulatorError(.signingFailed, "cannot sign the receipt: \(error.rule.rawValue)")
        }
    }

    /// verifyReceipt as this environment's host answers it. The response status carries the
    /// verdict; HTTP is always 200, as at Apple.
    public func verifyReceipt(body: Data) -> VerifyReceiptResponseBody {
        let now = clock.now
        var response = VerifyReceiptResponseBody()
        response.environment = RawEnum(environment)
        func status(_ value: VerifyReceiptStatus) -> VerifyReceiptResponseBody {
            var failed = VerifyReceiptResponseBody()
            failed.status = value
            failed.environment = RawEnum(environment)
            return failed
        }
        if outage { return status(.receiptServerUnavailable) }
        guard let request = try? AppStoreJSON.decode(VerifyReceiptRequestBody.self, from: body),
            let receiptText = request.receiptData, !receiptText.isEmpty,
            let receipt = try? AppReceipt(base64OrDER: Array(receiptText.utf8))
        else { return status(.malformedReceiptData) }
        guard (try? receipt.verifySignature(roots: [authority.root])) != nil else {
            return status(.notAuthenticated)
        }
        let isSandboxReceipt = receipt.receiptType == "ProductionSandbox"
        if environment == .production, isSandboxReceipt { return status(.sandboxReceiptSentToProduction) }
        if environment != .production, !isSandboxReceipt { return status(.productionReceiptSentToSandbox) }
        guard let bundleId = receipt.bundleId, let app = state.apps[bundleId],
            let opaque = receipt.opaqueValue, let customer = String(bytes: opaque, encoding: .utf8),
            state.customers[customer] != nil
        else { return status(.accountNotFound) }
        let hasSubscriptions = state.transactions(ofCustomer: customer).contains {
            $0.bundleId == bundleId && $0.kind == .autoRenewable
        }
        if let password = request.password, password != app.sharedSecret {
            return status(.sharedSecretMismatch)
        }
        response.status = .valid
        var legacy = LegacyReceipt()
        legacy.receiptType = receipt.receiptType
        legacy.adamId = receipt.appItemId
        legacy.appItemId = receipt.appItemId
        legacy.bundleId = bundleId
        legacy.applicationVersion = receipt.applicationVersion
        legacy.downloadId = 0
        legacy.versionExternalIdentifier = 0
        legacy.receiptCreationDate = receipt.receiptCreationDate
        legacy.requestDate = now
        legacy.originalPurchaseDate = receipt.originalPurchaseDate
        legacy.originalApplicationVersion = receipt.originalApplicationVersion
        legacy.inApp = receipt.transactionIds.compactMap { state.transactions[$0] }.map { state.legacyPurchase($0) }
        response.receipt = legacy
        // Apple adds the latest renewals only for receipts with subscriptions and a password.
        if hasSubscriptions, request.password != nil {
            response.latestReceipt = (try? signReceipt(customer: customer, bundleId: bundleId, now: now))
                .map { Data($0).base64EncodedString() }
            response.latestReceiptInfo = state.latestReceiptInfo(
                customer: customer, bundleId: bundleId, excludeOld: request.excludeOldTransactions == true)
            response.pendingRenewalInfo = state.pendingRenewalInfo(customer: customer, bundleId: bundleId)
        }
        return response
    }

    /// Queues the V1 counterpart of a V2 notification, when V1 has one.
    func enqueueV1(_ intent: NotificationIntent, app: SimulatedApp, url: URL, now: Timestamp) {
        guard let type = Self.v1Type(intent), let customer = intent.customerId,
            let transactionId = intent.transaction?.transactionId, let record = state.transactions[transactionId]
        else { return }
        var body = ResponseBodyV1()
        body.notificationType = RawEnum(type)
        body.password = app.sharedSecret
        body.environment = RawEnum(environment == .production ? .production : .sandbox)
        body.bid = app.bundleId
        body.bvrs = app.bundleVersion
        body.originalTransactionId = record.originalTransactionId
        body.webOrderLineItemId = record.webOrderLineItemId
        if let subscription = state.subscriptions[record.originalTransactionId], record.kind == .autoRenewable {
            body.autoRenewProductId = subscription.autoRenewProductId
            body.autoRenewStatus = subscription.autoRenew
            body.autoRenewStatusChangeDate = subscription.autoRenewStatusChangeDate
            if subscription.status != .active {
                body.expirationIntent = subscription.expirationIntent.map { RawEnum($0) }
            }
        }
        body.cancellationDate = record.revocationDate
        var unified = UnifiedReceipt()
        unified.environment = RawEnum(environment)
        unified.status = .valid
        unified.latestReceipt = (try? signReceipt(customer: customer, bundleId: app.bundleId, now: now))
            .map { Data($0).base64EncodedString() }
        unified.latestReceiptInfo =
            record.kind == .autoRenewable
            ? state.latestReceiptInfo(customer: customer, bundleId: app.bundleId, excludeOld: false)
            : [state.legacyPurchase(record)]
        unified.pendingRenewalInfo = state.pendingRenewalInfo(customer: customer, bundleId: app.bundleId)
        body.unifiedReceipt = unified
        v1Deliveries.append(V1Delivery(url: url, body: AppStoreJSON.encode(body), type: type, nextAttemptAt: now))
    }

    /// The V1 notification type Apple sent for the same event, if any.
    static func v1Type(_ intent: NotificationIntent) -> NotificationTypeV1? {
        switch (intent.type, intent.subtype) {
        case (.subscribed, .initialBuy?): return .initialBuy
        case (.subscribed, _): return .interactiveRenewal
        case (.didRenew, .billingRecovery?): return .didRecover
        case (.didRenew, _): return .didRenew
        case (.didFailToRenew, _): return .didFailToRenew
        case (.didChangeRenewalStatus, _): return .didChangeRenewalStatus
        case (.didChangeRenewalPref, .upgrade?), (.offerRedeemed, .upgrade?): return .interactiveRenewal
        case (.didChangeRenewalPref, _): return .didChangeRenewalPref
        case (.refund, _): return intent.kind == .autoRenewable ? .cancel : .refund
        case (.revoke, _): return .revoke
        case (.consumptionRequest, _): return .consumptionRequest
        case (.priceIncrease, .accepted?): return .priceIncreaseConsent
        default: return nil
        }
    }

    /// V1 notifications sent or queued, for tests: type and body.
    public func v1Notifications() -> [(type: String, body: Data, delivered: Bool)] {
        v1Deliveries.map { ($0.type.rawValue, $0.body, $0.delivered) }
    }
}
