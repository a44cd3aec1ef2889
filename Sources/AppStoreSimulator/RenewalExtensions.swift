import AppStoreModels
import Foundation

/// Extend a Subscription Renewal Date and Extend for All Active Subscribers, with Apple's
/// checks: 1–90 days, reason 0–3, at most two extensions per subscription in 365 days, active
/// purchased subscriptions only.
extension StoreState {
    static let maximumExtensionsPerYear = 2

    mutating func extendRenewalDate(
        originalTransactionId: String, bundleId: String, request: ExtendRenewalDateRequest, now: Timestamp
    ) throws(SimulatorError) -> ExtendRenewalDateResponse {
        try Self.validate(
            days: request.extendByDays, reason: request.extendReasonCode?.rawValue,
            requestIdentifier: request.requestIdentifier)
        guard Self.isTransactionIdShaped(originalTransactionId) else {
            throw .api(.invalidOriginalTransactionId, "Invalid original transaction id.")
        }
        guard var subscription = subscriptions[originalTransactionId], subscription.bundleId == bundleId else {
            throw .api(.originalTransactionIdNotFound, "Original transaction id not found.")
        }
        try extend(&subscription, days: request.extendByDays ?? 0, now: now)
        return ExtendRenewalDateResponse(
            originalTransactionId: originalTransactionId,
            webOrderLineItemId: transactions[subscription.latestTransactionId]?.webOrderLineItemId, success: true,
            effectiveDate: subscription.expiresDate)
    }

    private mutating func extend(_ subscription: inout SubscriptionRecord, days: Int32, now: Timestamp)
        throws(SimulatorError)
    {
        guard subscription.familySource == nil else {
            throw .api(.familySharedSubscriptionExtensionIneligible, "Family-shared subscriptions cannot be extended.")
        }
        guard subscription.status == .active, subscription.expiresDate > now else {
            throw .api(.subscriptionExtensionIneligible, "Subscription is not eligible for a renewal date extension.")
        }
        let yearAgo = now.adding(milliseconds: -365 * 86_400_000)
        guard subscription.extensionDates.filter({ $0 > yearAgo }).count < Self.maximumExtensionsPerYear else {
            throw .api(.subscriptionMaxExtension, "Subscription has reached the maximum number of extensions.")
        }
        subscription.extensionDates.append(now)
        subscription.expiresDate = subscription.expiresDate.adding(milliseconds: scale.milliseconds(days: Double(days)))
        if var latest = transactions[subscription.latestTransactionId] {
            latest.expiresDate = subscription.expiresDate
            latest.modifiedDate = now
            transactions[latest.transactionId] = latest
        }
        subscriptions[subscription.originalTransactionId] = subscription
        emit(.renewalExtended, transactionId: subscription.latestTransactionId, now: now)
        mirrorToFamily(subscription, .renewalExtended, nil, newTransaction: nil, now: now)
    }

    /// Extends every active subscriber of the product (in the given storefronts); Apple works
    /// through them asynchronously, the simulator at once, then sends the `SUMMARY`.
    mutating func massExtend(bundleId: String, request: MassExtendRenewalDateRequest, now: Timestamp)
        throws(SimulatorError) -> MassExtendRenewalDateResponse
    {
        try Self.validate(
            days: request.extendByDays, reason: request.extendReasonCode?.rawValue,
            requestIdentifier: request.requestIdentifier)
        let app = try app(bundleId)
        guard let productId = request.productId, let product = app.product(productId), product.kind == .autoRenewable
        else { throw .api(.invalidProductId, "Invalid product id.") }
        if let codes = request.storefrontCountryCodes {
            guard !codes.isEmpty else {
                throw .api(.invalidEmptyStorefrontCountryCodeList, "Storefront country code list is empty.")
            }
            guard codes.allSatisfy({ $0.count == 3 && $0.allSatisfy(\.isUppercase) }) else {
                throw .api(.invalidStorefrontCountryCode, "Invalid storefront country code.")
            }
        }
        let requestIdentifier = request.requestIdentifier ?? ""
        let candidates = subscriptions.values
            .filter {
                $0.bundleId == bundleId && $0.productId == productId && $0.familySource == nil && $0.status == .active
                    && (request.storefrontCountryCodes?.contains($0.storefront) ?? true)
            }
            .sorted { $0.originalTransactionId < $1.originalTransactionId }
        var succeeded: Int64 = 0
        var failed: Int64 = 0
        for var subscription in candidates {
            do {
                try extend(&subscription, days: request.extendByDays ?? 0, now: now)
                succeeded += 1
            } catch {
                failed += 1
                emit(.renewalExtension, .failure, transactionId: subscription.latestTransactionId, now: now)
            }
        }
        massExtensions[productId + "|" + requestIdentifier] = MassExtendRenewalDateStatusResponse(
            requestIdentifier: requestIdentifier, complete: true, completeDate: now, succeededCount: succeeded,
            failedCount: failed)
        var summary = Summary()
        summary.environment = RawEnum(environment)
        if environment == .production { summary.appAppleId = app.appAppleId }
        summary.bundleId = bundleId
        summary.productId = productId
        summary.requestIdentifier = requestIdentifier
        summary.storefrontCountryCodes =
            request.storefrontCountryCodes ?? Array(Set(candidates.map(\.storefront))).sorted()
        summary.succeededCount = succeeded
        summary.failedCount = failed
        pending.append(
            NotificationIntent(
                bundleId: bundleId, customerId: nil, type: .renewalExtension, subtype: .summary, transaction: nil,
                renewalInfo: nil, status: nil, consumptionRequestReason: nil, summary: summary,
                originalTransactionId: nil, kind: nil))
        return MassExtendRenewalDateResponse(requestIdentifier: requestIdentifier)
    }

    static func validate(days: Int32?, reason: Int32?, requestIdentifier: String?) throws(SimulatorError) {
        guard let days, (1...90).contains(days) else {
            throw .api(.invalidExtendByDays, "Invalid extend by days value.")
        }
        guard let reason, (0...3).contains(reason) else {
            throw .api(.invalidExtendReasonCode, "Invalid extend reason code.")
        }
        guard let requestIdentifier, !requestIdentifier.isEmpty, requestIdentifier.count <= 128 else {
            throw .api(.invalidRequestIdentifier, "Invalid request identifier.")
        }
    }

    /// Apple's transaction ids are decimal numbers; anything else is refused before lookup.
    static func isTransactionIdShaped(_ id: String) -> Bool {
        !id.isEmpty && id.count <= 24 && id.allSatisfy { $0.isASCII && $0.isNumber }
    }
}
