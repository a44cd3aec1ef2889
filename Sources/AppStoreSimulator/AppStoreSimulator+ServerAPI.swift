import AppStoreModels
import AppStoreTrust
import Foundation

/// The App Store Server API's operations, signed at the moment of the call as Apple signs
/// them. `SimulatorRoutes` puts them on Apple's paths.
extension AppStoreSimulator {
    func transactionInfo(bundleId: String, transactionId: String) throws(SimulatorError) -> TransactionInfoResponse {
        let record = try state.transactionInfo(transactionId, bundleId: bundleId)
        return TransactionInfoResponse(
            signedTransactionInfo: try signer.sign(state.transactionPayload(record, signedDate: clock.now)))
    }

    func transactionHistory(bundleId: String, transactionId: String, query: HistoryQuery, version: Int)
        throws(SimulatorError) -> HistoryResponse
    {
        let app = try state.app(bundleId)
        let page = try state.history(
            anyTransactionId: transactionId, bundleId: bundleId, query: query, version: version)
        let now = clock.now
        var signed: [String] = []
        for record in page.records { signed.append(try signer.sign(state.transactionPayload(record, signedDate: now))) }
        return HistoryResponse(
            revision: page.revision, hasMore: page.hasMore, bundleId: bundleId, appAppleId: app.appAppleId,
            environment: RawEnum(environment), signedTransactions: signed)
    }

    func subscriptionStatuses(bundleId: String, transactionId: String, filter: [Status]) throws(SimulatorError)
        -> StatusResponse
    {
        let app = try state.app(bundleId)
        let now = clock.now
        var groups: [SubscriptionGroupIdentifierItem] = []
        for (groupId, items) in try state.statuses(anyTransactionId: transactionId, bundleId: bundleId, filter: filter)
        {
            var last: [LastTransactionsItem] = []
            for subscription in items {
                guard let latest = state.transactions[subscription.latestTransactionId] else { continue }
                last.append(
                    LastTransactionsItem(
                        status: RawEnum(subscription.status), originalTransactionId: subscription.originalTransactionId,
                        signedTransactionInfo: try signer.sign(state.transactionPayload(latest, signedDate: now)),
                        signedRenewalInfo: try signer.sign(state.renewalPayload(subscription, signedDate: now))))
            }
            groups.append(SubscriptionGroupIdentifierItem(subscriptionGroupIdentifier: groupId, lastTransactions: last))
        }
        return StatusResponse(
            environment: RawEnum(environment), bundleId: bundleId, appAppleId: app.appAppleId, data: groups)
    }

    func refundHistory(bundleId: String, transactionId: String, revision: String?) throws(SimulatorError)
        -> RefundHistoryResponse
    {
        let page = try state.refundHistory(anyTransactionId: transactionId, bundleId: bundleId, revision: revision)
        let now = clock.now
        var signed: [String] = []
        for record in page.records { signed.append(try signer.sign(state.transactionPayload(record, signedDate: now))) }
        return RefundHistoryResponse(signedTransactions: signed, revision: page.revision, hasMore: page.hasMore)
    }

    /// Look Up Order ID: 200 with status 1 (invalid) for an unknown order, as Apple answers.
    func lookUpOrder(bundleId: String, orderId: String) throws(SimulatorError) -> OrderLookupResponse {
        let records = state.orderedTransactions {
            $0.orderId == orderId && $0.bundleId == bundleId && $0.ownership == .purchased
        }
        guard !records.isEmpty else { return OrderLookupResponse(status: RawEnum(.invalid), signedTransactions: []) }
        let now = clock.now
        var signed: [String] = []
        for record in records { signed.append(try signer.sign(state.transactionPayload(record, signedDate: now))) }
        return OrderLookupResponse(status: RawEnum(.valid), signedTransactions: signed)
    }

    /// The order id Apple would e-mail the customer for a transaction (tests and admin API).
    public func orderId(transactionId: String) -> String? { state.transactions[transactionId]?.orderId }

    func appTransactionInfo(bundleId: String, transactionId: String) throws(SimulatorError)
        -> AppTransactionInfoResponse
    {
        let customer = try state.customerOf(anyTransactionId: transactionId, bundleId: bundleId)
        guard let payload = state.appTransactionPayload(customer: customer, bundleId: bundleId, signedDate: clock.now)
        else { throw .api(.appTransactionDoesNotExist, "App transaction does not exist.") }
        return AppTransactionInfoResponse(signedAppTransactionInfo: try signer.sign(payload))
    }

    func finishTransaction(bundleId: String, transactionId: String) throws(SimulatorError) {
        let record = try state.transactionInfo(transactionId, bundleId: bundleId)
        try state.finish(transactionId: record.transactionId)
    }

    func setAppAccountToken(bundleId: String, originalTransactionId: String, body: Data) throws(SimulatorError) {
        guard StoreState.isTransactionIdShaped(originalTransactionId) else {
            throw .api(.invalidOriginalTransactionId, "Invalid original transaction id.")
        }
        guard let request = try? AppStoreJSON.decode(UpdateAppAccountTokenRequest.self, from: body),
            let token = request.appAccountToken
        else { throw .api(.invalidAppAccountTokenUUID, "Invalid app account token UUID.") }
        guard let record = state.transactions[originalTransactionId], record.bundleId == bundleId else {
            throw .api(.originalTransactionIdNotFound, "Original transaction id not found.")
        }
        guard record.originalTransactionId == originalTransactionId else {
            throw .api(.transactionIdIsNotOriginalTransactionId, "Transaction id is not an original transaction id.")
        }
        guard record.ownership != .familyShared else {
            throw .api(.familyTransactionNotSupported, "Family-shared transactions are not supported.")
        }
        for (id, var item) in state.transactions where item.originalTransactionId == originalTransactionId {
            item.appAccountToken = token
            state.transactions[id] = item
        }
        state.subscriptions[originalTransactionId]?.appAccountToken = token
    }

    /// Send Consumption Information (v1 and v2): checked against Apple's rules, then recorded;
    /// Apple answers 202.
    func sendConsumptionInformation(bundleId: String, transactionId: String, body: Data, version: Int)
        throws(SimulatorError)
    {
        let record = try state.transactionInfo(transactionId, bundleId: bundleId)
        if version == 1 {
            guard let request = try? AppStoreJSON.decode(ConsumptionRequestV1.self, from: body) else {
                throw .api(.generalBadRequest, "Bad request.")
            }
            guard request.customerConsented == true else {
                throw .api(.invalidCustomerConsented, "Invalid customer consented value.")
            }
        } else {
            try Self.checkConsumptionRequestV2(body, autoRenewable: record.kind == .autoRenewable)
        }
        state.consumptionInformation[transactionId] = body
    }

    /// The last consumption information the developer sent for a transaction (tests).
    public func consumptionInformation(transactionId: String) -> Data? { state.consumptionInformation[transactionId] }

    func extendRenewalDate(bundleId: String, originalTransactionId: String, body: Data) async throws(SimulatorError)
        -> ExtendRenewalDateResponse
    {
        guard let request = try? AppStoreJSON.decode(ExtendRenewalDateRequest.self, from: body) else {
            throw .api(.generalBadRequest, "Bad request.")
        }
        let now = clock.now
        let response = try state.extendRenewalDate(
            originalTransactionId: originalTransactionId, bundleId: bundleId, request: request, now: now)
        signPending(now: now)
        await deliverDue()
        return response
    }

    func massExtendRenewalDate(bundleId: String, body: Data) async throws(SimulatorError)
        -> MassExtendRenewalDateResponse
    {
        guard let request = try? AppStoreJSON.decode(MassExtendRenewalDateRequest.self, from: body) else {
            throw .api(.generalBadRequest, "Bad request.")
        }
        let now = clock.now
        let response = try state.massExtend(bundleId: bundleId, request: request, now: now)
        signPending(now: now)
        await deliverDue()
        return response
    }

    func massExtensionStatus(bundleId: String, productId: String, requestIdentifier: String) throws(SimulatorError)
        -> MassExtendRenewalDateStatusResponse
    {
        guard let status = state.massExtensions[productId + "|" + requestIdentifier],
            state.apps[bundleId]?.product(productId) != nil
        else { throw .api(.statusRequestNotFound, "Status request not found.") }
        return status
    }
}

extension AppStoreSimulator {
    /// The fields of Send Consumption Information v2; anything else (a v1 field such as
    /// `consumptionStatus` or `playTime`) is not the v2 shape.
    static let consumptionRequestV2Fields: Set<String> = [
        "customerConsented", "deliveryStatus", "sampleContentProvided", "consumptionPercentage", "refundPreference",
    ]

    /// Apple's rules for a v2 `ConsumptionRequest`: only v2 fields; `customerConsented` `true`;
    /// `deliveryStatus` and `sampleContentProvided` present and valid; `consumptionPercentage`
    /// an integer in 0...100000; `refundPreference` a known value; with `GRANT_PRORATED`, no
    /// percentage for an auto-renewable subscription (Apple computes it) and one above 0 for
    /// anything else.
    static func checkConsumptionRequestV2(_ body: Data, autoRenewable: Bool) throws(SimulatorError) {
        guard let decoded = try? AppStoreJSON.decode(JSONValue.self, from: body), case .object(let fields) = decoded
        else { throw .api(.generalBadRequest, "Bad request.") }
        guard Set(fields.keys).isSubset(of: consumptionRequestV2Fields) else {
            throw .api(.generalBadRequest, "Bad request.")
        }
        guard case .bool(true) = fields["customerConsented"] else {
            throw .api(.invalidCustomerConsented, "Invalid customer consented value.")
        }
        guard case .string(let delivery) = fields["deliveryStatus"], DeliveryStatus(rawValue: delivery) != nil else {
            throw .api(.invalidDeliveryStatus, "Invalid delivery status.")
        }
        guard case .bool = fields["sampleContentProvided"] else {
            throw .api(.invalidSampleContentProvided, "Invalid sample content provided value.")
        }
        var percentage: Int64?
        switch fields["consumptionPercentage"] {
        case nil: break
        case .integer(let value) where (0...100_000).contains(value): percentage = value
        default: throw .api(.generalBadRequest, "Invalid consumption percentage.")
        }
        var preference: RefundPreference?
        switch fields["refundPreference"] {
        case nil: break
        case .string(let value):
            guard let known = RefundPreference(rawValue: value) else {
                throw .api(.invalidRefundPreference, "Invalid refund preference.")
            }
            preference = known
        default: throw .api(.invalidRefundPreference, "Invalid refund preference.")
        }
        if preference == .grantProrated {
            if autoRenewable && percentage != nil {
                throw .api(.generalBadRequest, "Invalid consumption percentage.")
            }
            if !autoRenewable && (percentage ?? 0) <= 0 {
                throw .api(.generalBadRequest, "Invalid consumption percentage.")
            }
        }
    }
}
