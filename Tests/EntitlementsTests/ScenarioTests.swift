import Foundation
import Testing

@testable import Entitlements

/// Runs every named lifecycle of `ScenarioTable` and compares the engine's output at each
/// instant with the expectation, field by field.
@Suite struct ScenarioTests {
    @Test(arguments: ScenarioTable.all)
    func lifecycle(_ scenario: Scenario) {
        if ProcessInfo.processInfo.environment["ENTITLEMENTS_RECORD"] != nil {
            Self.record(scenario)
            return
        }
        #expect(!scenario.checks.isEmpty, "scenario has no expectations")
        for check in scenario.checks {
            let actual = Scenario.actual(
                Fixture.evaluate(scenario.facts, at: check.at, catalog: scenario.catalog), at: check.at)
            #expect(actual.entitlements == check.entitlements, "entitlements at d\(check.at)")
            #expect(actual.subscriptions == check.subscriptions, "subscriptions at d\(check.at)")
            #expect(actual.events == check.events, "events at d\(check.at)")
            if let purchases = check.purchases { #expect(actual.purchases == purchases, "purchases at d\(check.at)") }
            if let revenue = check.revenue { #expect(actual.revenue == revenue, "revenue at d\(check.at)") }
            if let eligibility = check.eligibility {
                #expect(actual.eligibility == eligibility, "eligibility at d\(check.at)")
            }
            if let notes = check.notes { #expect(actual.notes == notes, "notes at d\(check.at)") }
        }
    }

    /// Prints the actual output as Swift literals, for writing expectations (then reviewed by
    /// hand against Apple's rules before they are pasted into the table).
    static func record(_ scenario: Scenario) {
        func list(_ values: [String]) -> String {
            values.isEmpty
                ? "[]"
                : "[\n" + values.map { "                \(String(reflecting: $0))," }.joined(separator: "\n")
                    + "\n            ]"
        }
        var text = "=== \(scenario.name)\n"
        for instant in scenario.instants {
            let actual = Scenario.actual(
                Fixture.evaluate(scenario.facts, at: instant, catalog: scenario.catalog), at: instant)
            text += "            Check(\n                at: \(instant),\n"
            text += "                entitlements: \(list(actual.entitlements)),\n"
            text += "                subscriptions: \(list(actual.subscriptions)),\n"
            text += "                events: \(list(actual.events))"
            if !(actual.purchases ?? []).isEmpty { text += ",\n                purchases: \(list(actual.purchases!))" }
            text += ",\n                revenue: \(list(actual.revenue!))"
            text += ",\n                eligibility: \(list(actual.eligibility!))"
            if !(actual.notes ?? []).isEmpty { text += ",\n                notes: \(list(actual.notes!))" }
            text += "),\n"
        }
        print(text + "=== end")
    }
}
