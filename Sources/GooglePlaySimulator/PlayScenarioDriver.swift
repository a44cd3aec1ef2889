import AppStoreModels
import AppStoreSimulator
import Foundation
import GooglePlayModels

/// How a scenario's time moves for the Play simulator: on a manual clock it travels at once
/// (the end-to-end harness), on the wall clock with compressed periods (`simulate run`'s
/// accelerated clock) it is waited for while both simulators apply what time does.
public protocol PlayScenarioTimeline: Sendable {
    /// Simulator milliseconds in `days` days (a period, a pause, a move of the clock).
    func milliseconds(days: Double) -> Int64
    /// Brings the clock to `millis` (nothing when it is already there).
    func travel(to millis: Int64) async
}

/// A `ManualClock` moved by hand: travelling is setting it.
/// - Note: Immutable; `Sendable` (the clock is).
public struct ManualPlayTimeline: PlayScenarioTimeline {
    public let clock: ManualClock

    public init(clock: ManualClock) { self.clock = clock }

    public func milliseconds(days: Double) -> Int64 { Int64((days * 86_400_000).rounded()) }

    public func travel(to millis: Int64) async {
        if millis > clock.now.millisecondsSince1970 { clock.set(Timestamp(millisecondsSince1970: millis)) }
    }
}

/// The wall clock with the App Store simulator's compressed calendar (`TimeScale`): travelling
/// is waiting, with `tick` (what the caller's simulators do as time passes) run on the way.
/// - Note: Immutable; `Sendable`.
public struct AcceleratedPlayTimeline: PlayScenarioTimeline {
    public let clock: any SimulatorClock
    public let scale: TimeScale
    let tick: @Sendable () async -> Void

    public init(clock: any SimulatorClock, scale: TimeScale, tick: @escaping @Sendable () async -> Void) {
        (self.clock, self.scale, self.tick) = (clock, scale, tick)
    }

    public func milliseconds(days: Double) -> Int64 { scale.milliseconds(days: days) }

    public func travel(to millis: Int64) async {
        while clock.now.millisecondsSince1970 < millis, !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(50))
            await tick()
        }
    }
}

/// Runs a scenario's `play_store` steps on a Play simulator: keeps each customer's purchase
/// tokens (the Play simulator knows tokens, not customers), moves the scenario's time through
/// its `PlayScenarioTimeline`, and answers what the app would post. Used by the end-to-end
/// harness and by `storekeeper simulate run`.
/// - Note: An actor; its token book is touched by one scenario run.
public actor PlayScenarioDriver {
    public let play: PlaySimulator
    public let packageName: String
    let timeline: any PlayScenarioTimeline
    /// Product id → whether it is a subscription (an auto-renewable product in the catalog).
    private let subscriptionProducts: Set<String>
    /// (customer, product id) → tokens, oldest first.
    private var tokens: [String: [String]] = [:]
    private var owners: [String: String] = [:]

    public init(
        play: PlaySimulator, packageName: String, products: [SimulatedProduct], timeline: any PlayScenarioTimeline
    ) {
        (self.play, self.packageName, self.timeline) = (play, packageName, timeline)
        subscriptionProducts = Set(products.filter { $0.kind == .autoRenewable }.map(\.productId))
    }

    private static func key(_ customer: String, _ productId: String) -> String { customer + "\u{0}" + productId }

    /// The customer's latest token of `productId`, or of its only product when nil.
    public func token(of customer: String, productId: String?) throws -> (token: String, productId: String) {
        if let productId {
            guard let token = tokens[Self.key(customer, productId)]?.last else {
                throw PlayScenarioError("\(customer) has no Google Play purchase of \(productId)")
            }
            return (token, productId)
        }
        let mine = tokens.filter { $0.key.hasPrefix(customer + "\u{0}") }
        guard mine.count == 1, let entry = mine.first, let token = entry.value.last else {
            throw PlayScenarioError("\(customer) has \(mine.count) Google Play products: name the productId")
        }
        return (token, String(entry.key.dropFirst(customer.count + 1)))
    }

    public func owner(of token: String) -> String? { owners[token] }

    /// Whether `productId` is bought as a subscription (else as a one-time product).
    public func isSubscription(_ productId: String) -> Bool { subscriptionProducts.contains(productId) }

    private func record(_ token: String, customer: String, productId: String) {
        tokens[Self.key(customer, productId), default: []].append(token)
        owners[token] = customer
    }

    /// Performs the action; the pushes it caused are in the Play simulator's record.
    public func perform(_ action: PlayScenarioAction) async throws {
        let play = self.play
        let timeline = self.timeline
        func travel(to millis: Int64) async { await timeline.travel(to: millis) }
        if action.action == .advanceTime {
            let now = play.clock.now.millisecondsSince1970
            await travel(
                to: now + timeline.milliseconds(days: Double(action.days ?? 0) + (action.hours ?? 0) / 24))
            return
        }
        let customer = action.customer ?? ""
        if action.action == .purchase {
            guard let productId = action.productId else { throw PlayScenarioError("purchase needs a productId") }
            let token: String
            if isSubscription(productId) {
                token = try await play.purchaseSubscription(
                    packageName: packageName, productId: productId,
                    periodMillis: timeline.milliseconds(days: Double(action.days ?? 30)),
                    obfuscatedAccountId: "\(customer)-account")
            } else {
                token = try await play.purchaseProduct(
                    packageName: packageName, productId: productId, quantity: action.quantity ?? 1,
                    obfuscatedAccountId: "\(customer)-account")
            }
            record(token, customer: customer, productId: productId)
            return
        }
        let (token, productId) = try self.token(of: customer, productId: action.productId)
        guard isSubscription(productId) else {
            guard action.action == .void else {
                throw PlayScenarioError("\(productId) is a one-time product: only purchase and void apply")
            }
            return try await play.voidProduct(
                token, quantity: action.quantity, reason: action.reason, source: action.source)
        }
        guard let subscription = await play.subscription(token) else {
            throw PlayScenarioError("the Play simulator does not know \(token)")
        }
        switch action.action {
        case .purchase, .advanceTime:
            break
        case .renew:
            await travel(to: subscription.expiryMillis)
            try await play.renew(token)
        case .grace:
            await travel(to: subscription.expiryMillis)
            try await play.enterGracePeriod(token)
        case .hold:
            await travel(to: subscription.graceEndsMillis ?? subscription.expiryMillis)
            try await play.hold(token)
        case .recover:
            try await play.recover(token)
        case .pause:
            await travel(to: subscription.expiryMillis)
            let resumeAt = play.clock.now.millisecondsSince1970 + timeline.milliseconds(days: Double(action.days ?? 30))
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
            await travel(to: subscription.holdEndsMillis ?? subscription.expiryMillis)
            try await play.expire(token)
        case .void:
            try await play.voidSubscription(token, reason: action.reason, source: action.source)
        case .changePlan:
            let target = action.toProductId ?? ""
            guard isSubscription(target) else { throw PlayScenarioError("\(target) is not a subscription") }
            let new = try await play.changePlan(token, toProductId: target)
            record(new, customer: customer, productId: target)
        }
    }

    /// What an expectation may write for values the Play simulator draws:
    /// `{token:customer/productId}` for the customer's latest purchase token of the product and
    /// `{order:customer/productId}` for its first order id (a renewal's is `{order:…}..0`).
    public func placeholders() async -> [String: String] {
        var values: [String: String] = [:]
        for (key, list) in tokens {
            guard let token = list.last else { continue }
            let name = key.replacingOccurrences(of: "\u{0}", with: "/")
            values["{token:\(name)}"] = token
            let subscription = await play.subscription(token)
            let product = await play.productPurchase(token)
            if let order = subscription?.orderId ?? product?.orderId { values["{order:\(name)}"] = order }
        }
        return values
    }

    /// The state the Play simulator holds for the customer's subscription (Google's name).
    public func state(of customer: String, productId: String) async throws -> String? {
        let (token, _) = try self.token(of: customer, productId: productId)
        return await play.subscription(token)?.state.rawValue
    }

    /// A push as a scenario expects it: Google's name of the notification type, and for a voided
    /// purchase the refund type as the subtype.
    public static func describe(_ notification: DeveloperNotification) -> (
        type: String, subtype: String?, token: String
    ) {
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
    public static let subscriptionNames: [Int: String] = [
        1: "SUBSCRIPTION_RECOVERED", 2: "SUBSCRIPTION_RENEWED", 3: "SUBSCRIPTION_CANCELED",
        4: "SUBSCRIPTION_PURCHASED", 5: "SUBSCRIPTION_ON_HOLD", 6: "SUBSCRIPTION_IN_GRACE_PERIOD",
        7: "SUBSCRIPTION_RESTARTED", 8: "SUBSCRIPTION_PRICE_CHANGE_CONFIRMED", 9: "SUBSCRIPTION_DEFERRED",
        10: "SUBSCRIPTION_PAUSED", 11: "SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED", 12: "SUBSCRIPTION_REVOKED",
        13: "SUBSCRIPTION_EXPIRED", 17: "SUBSCRIPTION_ITEMS_CHANGED", 18: "SUBSCRIPTION_CANCELLATION_SCHEDULED",
        19: "SUBSCRIPTION_PRICE_CHANGE_UPDATED", 20: "SUBSCRIPTION_PENDING_PURCHASE_CANCELED",
        22: "SUBSCRIPTION_PRICE_STEP_UP_CONSENT_UPDATED",
    ]
}
