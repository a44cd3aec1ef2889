import AppStoreModels
import Foundation
import Testing

/// The fixture of each `PlayLifecycleEndToEndTests` test: a Play subscription bought at the
/// harness's now, posted by the app for one customer and acknowledged by Storekeeper's job, and
/// how that customer's entitlement, pushes and events read afterwards.
struct PlayLifecycle {
    static let day = PlayEndToEndTests.day
    static let package = PlayEndToEndTests.package

    let harness: EndToEndHarness
    let customer: String
    let productId: String
    let token: String
    /// The first order's id.
    let order: String
    /// When it was bought (milliseconds since 1970).
    let start: Int64

    /// What every push got and the customer's event ids, in order.
    struct Outcome: Equatable {
        var pushes: [Int?]
        var events: [String]

        /// `pushes` pushes, each answered 200, and `events`.
        init(accepted pushes: Int, events: [String]) {
            self.pushes = Array(repeating: 200, count: pushes)
            self.events = events
        }

        init(pushes: [Int?], events: [String]) {
            self.pushes = pushes
            self.events = events
        }
    }

    /// Runs `body` on a fresh harness with `customer`'s subscription to `productId` bought.
    static func run(
        _ customer: String, productId: String = "monthly", acknowledgePurchases: Bool = true,
        _ body: (PlayLifecycle) async throws -> Void
    ) async throws {
        try await PlayEndToEndTests.run(acknowledgePurchases: acknowledgePurchases) { harness in
            try await body(try await subscribe(harness, customer, productId: productId))
        }
    }

    static func subscribe(_ harness: EndToEndHarness, _ customer: String, productId: String) async throws
        -> PlayLifecycle
    {
        let start = harness.clock.now.millisecondsSince1970
        let token = try await harness.play.purchaseSubscription(
            packageName: package, productId: productId, obfuscatedAccountId: "\(customer)-account")
        try harness.expect(200, await PlayEndToEndTests.post(harness, customer, token: token, productId: productId))
        _ = await harness.application.jobWorker.runDue()
        let order = try #require(await harness.play.subscription(token)?.orderId)
        return PlayLifecycle(
            harness: harness, customer: customer, productId: productId, token: token, order: order, start: start)
    }

    /// Moves the shared clock on by `days` (and `milliseconds`).
    func advance(days: Int64, milliseconds: Int64 = 0) {
        harness.clock.advance(milliseconds: days * Self.day + milliseconds)
    }

    /// `start` plus `days`.
    func day(_ days: Int64) -> Int64 { start + days * Self.day }

    /// The order id of the `index`th renewal (Google's `..index` suffix).
    func renewal(_ index: Int) -> String { "\(order)..\(index)" }

    /// An event id: `type/order/product` (default: the first order of this product).
    func event(_ type: String, order: String? = nil, productId: String? = nil) -> String {
        "\(type)/\(order ?? self.order)/\(productId ?? self.productId)"
    }

    /// A time as the "why" texts write it.
    static func text(_ milliseconds: Int64) -> String {
        Timestamp(millisecondsSince1970: milliseconds).description.replacingOccurrences(of: ".000Z", with: "Z")
    }

    /// The customer's entitlement `pro` as the API shows it.
    func pro() async throws -> NSDictionary {
        PlayEndToEndTests.entitlement(try await PlayEndToEndTests.customer(harness, customer), "pro") as NSDictionary
    }

    /// The customer's subscription to `productId` as the API shows it.
    func subscription(_ productId: String) async throws -> NSDictionary {
        let info = try await PlayEndToEndTests.customer(harness, customer)
        return (info["subscriptions"] as? [String: Any])?[productId] as? NSDictionary ?? [:]
    }

    /// The entitlement `pro` as a Play subscription shows it: by default this one's token,
    /// first order, product and start.
    func grant(
        token: String? = nil, transactionId: String? = nil, start: Int64? = nil, purchaseDate: Int64? = nil,
        productId: String? = nil, expires: Int64, active: Bool, willRenew: Bool, reason: String,
        extra: [String: Any] = [:]
    ) -> NSDictionary {
        var value: [String: Any] = [
            "entitlementId": "pro", "environment": "Sandbox", "expiresDate": expires, "isActive": active,
            "originalPurchaseDate": start ?? self.start, "originalTransactionId": token ?? self.token,
            "ownership": "PURCHASED", "periodType": "NORMAL", "productId": productId ?? self.productId,
            "purchaseDate": purchaseDate ?? start ?? self.start, "reason": reason, "store": "play_store",
            "transactionId": transactionId ?? order, "willRenew": willRenew,
        ]
        value.merge(extra) { $1 }
        return value as NSDictionary
    }

    /// The entitlement once the first renewal's payment went through at `paid`: a new 30-day
    /// period from then, renewing.
    func renewed(at paid: Int64) -> NSDictionary {
        let end = paid + 30 * Self.day
        return grant(
            transactionId: renewal(0), purchaseDate: paid, expires: end, active: true, willRenew: true,
            reason: "active: granted by \(productId), active until \(Self.text(end)); renews")
    }

    /// The customer's events as the API shows them, in order.
    func events() async throws -> [[String: Any]] {
        let answer = try harness.expect(
            200,
            await harness.request(
                "GET", "/v1/apps/\(harness.appId)/customers/\(customer)/events?limit=500", key: harness.secretKey))
        return (answer.json["events"] as? [[String: Any]] ?? []).compactMap { $0["event"] as? [String: Any] }
    }

    func outcome() async throws -> Outcome {
        Outcome(
            pushes: await PlayEndToEndTests.pushStatuses(harness),
            events: try await events().compactMap { $0["id"] as? String })
    }
}
