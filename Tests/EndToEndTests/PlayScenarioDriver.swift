import AppStoreModels
import AppStoreSimulator
import Foundation
import GooglePlayModels
import GooglePlaySimulator

/// Runs a scenario's `play_store` steps on the harness's Play simulator: keeps each customer's
/// purchase tokens (the Play simulator knows tokens, not customers), travels the clock shared with
/// the App Store simulator, and answers what the app would post.
/// - Note: An actor; its token book is touched by one scenario run.
actor PlayScenarioDriver {
    static let day: Int64 = 86_400_000

    let harness: EndToEndHarness
    /// Product id → whether it is a subscription (an auto-renewable product in the catalog).
    private let subscriptionProducts: Set<String>
    /// (customer, product id) → tokens, oldest first.
    private var tokens: [String: [String]] = [:]
    private var owners: [String: String] = [:]

    init(harness: EndToEndHarness, products: [SimulatedProduct]) {
        self.harness = harness
        subscriptionProducts = Set(products.filter { $0.kind == .autoRenewable }.map(\.productId))
    }

    private static func key(_ customer: String, _ productId: String) -> String { customer + "\u{0}" + productId }

    /// The customer's latest token of `productId`, or of its only product when nil.
    func token(of customer: String, productId: String?) throws -> (token: String, productId: String) {
        if let productId {
            guard let token = tokens[Self.key(customer, productId)]?.last else {
                throw EndToEndFailure("\(customer) has no Google Play purchase of \(productId)")
            }
            return (token, productId)
        }
        let mine = tokens.filter { $0.key.hasPrefix(customer + "\u{0}") }
        guard mine.count == 1, let entry = mine.first, let token = entry.value.last else {
            throw EndToEndFailure("\(customer) has \(mine.count) Google Play products: name the productId")
        }
        return (token, String(entry.key.dropFirst(customer.count + 1)))
    }

    func owner(of token: String) -> String? { owners[token] }

    /// Whether `productId` is bought as a subscription (else as a one-time product).
    func isSubscription(_ productId: String) -> Bool { subscriptionProducts.contains(productId) }

    private func record(_ token: String, customer: String, productId: String) {
        tokens[Self.key(customer, productId), default: []].append(token)
        owners[token] = customer
    }

    /// Performs the action; the pushes it caused are in the Play simulator's record.
    func perform(_ action: PlayScenarioAction) async throws {
        let play = harness.play
        let clock = harness.clock
        func travel(to millis: Int64) {
            if millis > clock.now.millisecondsSince1970 { clock.set(Timestamp(millisecondsSince1970: millis)) }
        }
        if action.action == .advanceTime {
            clock.advance(milliseconds: Int64(action.days ?? 0) * Self.day)
            clock.advance(milliseconds: Int64(((action.hours ?? 0) * 3_600_000).rounded()))
            return
        }
        let customer = action.customer ?? ""
        if action.action == .purchase {
            guard let productId = action.productId else { throw EndToEndFailure("purchase needs a productId") }
            let token: String
            if isSubscription(productId) {
                token = try await play.purchaseSubscription(
                    packageName: harness.scenarioPlayPackage, productId: productId,
                    periodMillis: Int64(action.days ?? 30) * Self.day, obfuscatedAccountId: "\(customer)-account")
            } else {
                token = try await play.purchaseProduct(
                    packageName: harness.scenarioPlayPackage, productId: productId, quantity: action.quantity ?? 1,
                    obfuscatedAccountId: "\(customer)-account")
            }
            record(token, customer: customer, productId: productId)
            return
        }
        let (token, productId) = try self.token(of: customer, productId: action.productId)
        guard isSubscription(productId) else {
            guard action.action == .void else {
                throw EndToEndFailure("\(productId) is a one-time product: only purchase and void apply")
            }
            return try await play.voidProduct(
                token, quantity: action.quantity, reason: action.reason, source: action.source)
        }
        guard let subscription = await play.subscription(token) else {
            throw EndToEndFailure("the Play simulator does not know \(token)")
        }
        switch action.action {
        case .purchase, .advanceTime:
            break
        case .renew:
            travel(to: subscription.expiryMillis)
            try await play.renew(token)
        case .grace:
            travel(to: subscription.expiryMillis)
            try await play.enterGracePeriod(token)
        case .hold:
            travel(to: subscription.graceEndsMillis ?? subscription.expiryMillis)
            try await play.hold(token)
        case .recover:
            try await play.recover(token)
        case .pause:
            travel(to: subscription.expiryMillis)
            let resumeAt = clock.now.millisecondsSince1970 + Int64(action.days ?? 30) * Self.day
            try await play.pause(token, resumeAtMillis: resumeAt)
        case .resume:
            try await play.resume(token)
        case .cancel:
            try await play.cancel(token)
        case .restart:
            try await play.restart(token)
        case .revoke:
            try await play.revoke(token)
        case .expire:
            travel(to: subscription.holdEndsMillis ?? subscription.expiryMillis)
            try await play.expire(token)
        case .void:
            try await play.voidSubscription(token, reason: action.reason, source: action.source)
        case .changePlan:
            let target = action.toProductId ?? ""
            guard isSubscription(target) else { throw EndToEndFailure("\(target) is not a subscription") }
            let new = try await play.changePlan(token, toProductId: target)
            record(new, customer: customer, productId: target)
        }
    }

    /// What an expectation may write for values the Play simulator draws:
    /// `{token:customer/productId}` for the customer's latest purchase token of the product and
    /// `{order:customer/productId}` for its first order id (a renewal's is `{order:…}..0`).
    func placeholders() async -> [String: String] {
        var values: [String: String] = [:]
        for (key, list) in tokens {
            guard let token = list.last else { continue }
            let name = key.replacingOccurrences(of: "\u{0}", with: "/")
            values["{token:\(name)}"] = token
            let subscription = await harness.play.subscription(token)
            let product = await harness.play.productPurchase(token)
            if let order = subscription?.orderId ?? product?.orderId { values["{order:\(name)}"] = order }
        }
        return values
    }

    /// The state the Play simulator holds for the customer's subscription (Google's name).
    func state(of customer: String, productId: String) async throws -> String? {
        let (token, _) = try self.token(of: customer, productId: productId)
        return await harness.play.subscription(token)?.state.rawValue
    }

    /// A push as a scenario expects it: Google's name of the notification type, and for a voided
    /// purchase the refund type as the subtype.
    static func describe(_ notification: DeveloperNotification) -> (type: String, subtype: String?, token: String) {
        switch notification.kind {
        case .subscription(let subscription):
            let number = subscription.notificationType.rawValue
            return (subscriptionNames[number] ?? "SUBSCRIPTION_NOTIFICATION_\(number)", nil, subscription.purchaseToken)
        case .oneTimeProduct(let product):
            let name = product.notificationType.value.map { $0 == .purchased ? "PURCHASED" : "CANCELED" }
            return (
                "ONE_TIME_PRODUCT_" + (name ?? "\(product.notificationType.rawValue)"), nil, product.purchaseToken
            )
        case .voidedPurchase(let voided):
            let refund =
                voided.refundType.value.map { $0 == .fullRefund ? "FULL_REFUND" : "QUANTITY_BASED_PARTIAL_REFUND" }
            return ("VOIDED_PURCHASE", refund ?? "\(voided.refundType.rawValue)", voided.purchaseToken)
        case .test:
            return ("TEST_NOTIFICATION", nil, "")
        case nil:
            return ("UNKNOWN", nil, "")
        }
    }

    /// Google's names of `subscriptionNotification.notificationType`.
    static let subscriptionNames: [Int: String] = [
        1: "SUBSCRIPTION_RECOVERED", 2: "SUBSCRIPTION_RENEWED", 3: "SUBSCRIPTION_CANCELED",
        4: "SUBSCRIPTION_PURCHASED", 5: "SUBSCRIPTION_ON_HOLD", 6: "SUBSCRIPTION_IN_GRACE_PERIOD",
        7: "SUBSCRIPTION_RESTARTED", 8: "SUBSCRIPTION_PRICE_CHANGE_CONFIRMED", 9: "SUBSCRIPTION_DEFERRED",
        10: "SUBSCRIPTION_PAUSED", 11: "SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED", 12: "SUBSCRIPTION_REVOKED",
        13: "SUBSCRIPTION_EXPIRED", 17: "SUBSCRIPTION_ITEMS_CHANGED", 18: "SUBSCRIPTION_CANCELLATION_SCHEDULED",
        19: "SUBSCRIPTION_PRICE_CHANGE_UPDATED", 20: "SUBSCRIPTION_PENDING_PURCHASE_CANCELED",
        22: "SUBSCRIPTION_PRICE_STEP_UP_CONSENT_UPDATED",
    ]
}
