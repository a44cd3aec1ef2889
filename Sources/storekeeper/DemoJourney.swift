import AppStoreSimulator

/// One kind of demo customer life: what the customer does at the App Store, what the app
/// posts to Storekeeper afterwards (as StoreKit hands it the transaction), and the pauses in
/// store days between, which the accelerated clock shrinks. What the store does by itself
/// (renewals, billing retries, grace periods, expiry) happens on the simulator's clock.
///
/// New customers take the journeys in this order, round and round, so the first customer
/// (`user-0001`) starts a free trial and converts within the first minute.
/// - Note: Immutable value; `Sendable`.
enum DemoJourney: String, CaseIterable, Sendable {
    case trialConverts = "free trial, converts, renews monthly"
    case upgradesToYearly = "trial, then upgrades to yearly"
    case buysCoins = "buys coins three times"
    case cancelsAfterRenewing = "renews, then turns auto-renew off and expires"
    case billingIssueRecovered = "billing fails, grace period, payment recovered"
    case lifetimeRefundedThenReversed = "buys lifetime, refunded, refund reversed"
    case familySharing = "family sharing, then the family member leaves"
    case renewsMonthly = "renews monthly"
    case billingIssueExpires = "billing fails until the subscription expires"
    case downgradesAtRenewal = "yearly, downgrades to monthly at renewal"
    case yearlyRefunded = "yearly, refunded for a developer issue"

    /// A step of a journey.
    enum Step: Sendable {
        /// The customer acts at the App Store (the simulator).
        case store(SimulatorAction)
        /// The customer's app posts their latest transaction (of a product) to Storekeeper.
        case appPosts(customer: String, productId: String?)
        /// Nothing happens for this many store days.
        case wait(days: Double)
    }

    /// The demo catalog's product ids.
    struct Products: Sendable {
        var monthly: String
        var yearly: String
        var lifetime: String
        var coins: String

        init(bundleId: String) {
            monthly = bundleId + ".monthly"
            yearly = bundleId + ".yearly"
            lifetime = bundleId + ".lifetime"
            coins = bundleId + ".coins100"
        }
    }

    /// The journey's customers (the first is the one it is named after) and its steps.
    func plan(customer: String, products: Products) -> (customers: [SimulatedCustomer], steps: [Step]) {
        func purchase(_ productId: String, by who: String = customer, trial: Bool? = nil, quantity: Int32? = nil)
            -> Step
        {
            var action = SimulatorAction(.purchase, customer: who, productId: productId)
            action.introductoryOffer = trial
            action.quantity = quantity
            return .store(action)
        }
        func act(
            _ kind: SimulatorAction.Kind, productId: String? = nil,
            _ configure: (inout SimulatorAction) -> Void = { _ in }
        )
            -> Step
        {
            var action = SimulatorAction(kind, customer: customer, productId: productId)
            configure(&action)
            return .store(action)
        }
        let posts = Step.appPosts(customer: customer, productId: nil)
        let storefront = ["USA", "FRA", "GBR"][customer.utf8.reduce(0) { $0 + Int($1) } % 3]
        var customers = [SimulatedCustomer(id: customer, storefront: storefront)]
        let steps: [Step]
        switch self {
        case .trialConverts:
            steps = [purchase(products.monthly), posts]
        case .renewsMonthly:
            steps = [purchase(products.monthly, trial: false), posts]
        case .cancelsAfterRenewing:
            steps = [
                purchase(products.monthly, trial: false), posts, .wait(days: 40),
                act(.setAutoRenew, productId: products.monthly) { $0.enabled = false },
            ]
        case .billingIssueRecovered:
            steps = [
                purchase(products.monthly, trial: false), posts, .wait(days: 20), act(.billingIssue), .wait(days: 16),
                act(.billingRecovery),
            ]
        case .billingIssueExpires:
            steps = [purchase(products.monthly, trial: false), posts, .wait(days: 10), act(.billingIssue)]
        case .upgradesToYearly:
            steps = [
                purchase(products.monthly), posts, .wait(days: 12), purchase(products.yearly),
                .appPosts(customer: customer, productId: products.yearly),
            ]
        case .downgradesAtRenewal:
            steps = [purchase(products.yearly, trial: false), posts, .wait(days: 6), purchase(products.monthly)]
        case .lifetimeRefundedThenReversed:
            steps = [
                purchase(products.lifetime), posts, .wait(days: 3),
                act(.refund, productId: products.lifetime) { $0.reason = "other" }, .wait(days: 4),
                act(.reverseRefund, productId: products.lifetime),
            ]
        case .familySharing:
            let member = customer + "-family"
            customers = [
                SimulatedCustomer(id: customer, storefront: storefront, familyGroup: "family-" + customer),
                SimulatedCustomer(id: member, storefront: storefront, familyGroup: "family-" + customer),
            ]
            steps = [
                purchase(products.yearly, trial: false), posts, .appPosts(customer: member, productId: nil),
                .wait(days: 20), .store(SimulatorAction(.leaveFamily, customer: member)),
            ]
        case .buysCoins:
            let coins = Step.appPosts(customer: customer, productId: products.coins)
            steps = [
                purchase(products.coins), coins, .wait(days: 2), purchase(products.coins, quantity: 3), coins,
                .wait(days: 5), purchase(products.coins), coins,
            ]
        case .yearlyRefunded:
            steps = [
                purchase(products.yearly, trial: false), posts, .wait(days: 8),
                act(.refund, productId: products.yearly) { $0.reason = "developerIssue" },
            ]
        }
        return (customers, steps)
    }
}
