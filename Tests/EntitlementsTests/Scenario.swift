import Entitlements
import Testing

/// What a scenario asserts at one instant: the exact entitlements, subscriptions and
/// chronological event list, plus other parts of `CustomerInfo` where the rule lives there.
struct Check: Sendable {
    var at: Double
    var entitlements: [String]
    var subscriptions: [String]
    var events: [String]
    var purchases: [String]? = nil
    var revenue: [String]? = nil
    var eligibility: [String]? = nil
    var notes: [String]? = nil
}

/// A named customer lifecycle: its facts and what must hold at several instants.
struct Scenario: Sendable, CustomTestStringConvertible {
    var name: String
    var facts: [Fact]
    var catalog: ProductCatalog = Fixture.catalog
    var instants: [Double] = []
    var checks: [Check] = []

    init(
        _ name: String, catalog: ProductCatalog = Fixture.catalog, facts: [Fact], instants: [Double] = [],
        checks: [Check] = []
    ) {
        self.name = name
        self.facts = facts
        self.catalog = catalog
        self.instants = instants
        self.checks = checks
    }

    var testDescription: String { name }

    static func actual(_ evaluation: EntitlementEvaluation, at instant: Double) -> Check {
        let info = evaluation.customerInfo
        return Check(
            at: instant,
            entitlements: info.entitlements.values.map(Rendering.entitlement).sorted(),
            subscriptions: info.subscriptions.values.map(Rendering.subscription).sorted(),
            events: evaluation.allEvents.map(Rendering.event),
            purchases: info.nonSubscriptionPurchases.map(Rendering.purchase),
            revenue: info.revenue.map(Rendering.revenue),
            eligibility: info.introOfferEligibility.values
                .map { "\($0.subscriptionGroup) \($0.isEligible ? "eligible" : "ineligible")" }.sorted(),
            notes: info.notes)
    }
}
