import AppStoreModels
import Entitlements
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

/// Issue 17, item 6, through the server: the same signed purchases and notifications ingested in
/// signed order and shuffled (and, on PostgreSQL, through three instances at once) leave the
/// same standing lifecycle events, field for field.
@Suite struct EventIdentityIngestionTests {
    static var engines: [StoreEngine] { [.sqlite] + (TestDatabase.postgresURL == nil ? [] : [.postgres]) }

    /// One thing to send: a purchase the app posts, or a notification Apple sends.
    struct Delivery: Sendable {
        var appUserId: String
        var signed: Timestamp
        var purchase: String?
        var notification: String?
    }

    /// Per customer: the purchase, its SUBSCRIBED, the renewal (its renewal info says auto-renew
    /// on), auto-renew off and back on in the second period, and the first period's auto-renew
    /// off at d10 and d12 (the reproduction, and a change a late older snapshot moves).
    static func deliveries(signer: AppStoreSigner, customers: Int) throws -> [Delivery] {
        let t0 = TestSigning.signedDate
        var all: [Delivery] = []
        for customer in 0..<customers {
            let user = "user-\(customer)"
            let first = uniqueDigits()
            let second = uniqueDigits()
            let tx1 = try signer.transaction(
                id: first, originalId: first, purchase: t0, expires: t0.plus(days: 30), signed: t0)
            let tx2 = try signer.transaction(
                id: second, originalId: first, purchase: t0.plus(days: 30), expires: t0.plus(days: 60),
                signed: t0.plus(days: 30), reason: .renewal)
            func renewal(_ day: Double, _ on: Bool) throws -> String {
                try signer.renewal(originalId: first, signed: t0.plus(days: day), autoRenew: on)
            }
            func note(_ type: NotificationTypeV2, _ subtype: Subtype?, _ tx: String, _ day: Double, _ on: Bool) throws
                -> Delivery
            {
                Delivery(
                    appUserId: user, signed: t0.plus(days: day),
                    notification: try signer.notification(
                        type, subtype, transaction: tx, renewal: try renewal(day, on), signed: t0.plus(days: day)))
            }
            all.append(Delivery(appUserId: user, signed: t0, purchase: tx1))
            all.append(try note(.subscribed, .initialBuy, tx1, 0.001, true))
            all.append(try note(.didRenew, nil, tx2, 30, true))
            all.append(try note(.didChangeRenewalStatus, .autoRenewDisabled, tx2, 35, false))
            all.append(try note(.didChangeRenewalStatus, .autoRenewEnabled, tx2, 40, true))
            all.append(try note(.didChangeRenewalStatus, .autoRenewDisabled, tx1, 10, false))
            all.append(try note(.didChangeRenewalStatus, .autoRenewDisabled, tx1, 12, false))
        }
        return all
    }

    static func send(_ delivery: Delivery, to harness: ServerHarness, app: ServerHarness.AppKeys) async throws {
        let response: TestResponse
        if let purchase = delivery.purchase {
            response = try await harness.request(
                "POST", "/v1/apps/\(app.appId)/customers/\(delivery.appUserId)/transactions", key: app.publicKey,
                json: ["signedTransaction": purchase])
        } else {
            response = try await harness.request(
                "POST", "/v1/apps/\(app.appId)/notifications/appstore",
                json: ["signedPayload": delivery.notification!])
        }
        #expect(response.status == 200, "\(response.text)")
    }

    /// Per customer, the standing events (not retracted; without the corrections
    /// EVENT_RETRACTED and EXPIRATION_REASON_UPDATED, whose history depends on arrival), in a
    /// fixed order; and how many were retracted.
    static func standing(_ store: any Store, appId: String, customers: Int) async throws
        -> (events: [String: [LifecycleEvent]], retracted: Int)
    {
        try await store.read { reader in
            var result: [String: [LifecycleEvent]] = [:]
            var retracted = 0
            for customer in 0..<customers {
                let user = "user-\(customer)"
                guard let record = try reader.customer(appId: appId, .appUserId(user)) else { continue }
                let rows = try reader.events(customerId: record.id, after: nil, limit: 10_000)
                retracted += rows.filter { $0.retractedAt != nil }.count
                result[user] = rows.filter {
                    $0.retractedAt == nil && $0.event.type != .eventRetracted
                        && $0.event.type != .expirationReasonUpdated
                }.map(\.event).sorted { $0.id < $1.id }
            }
            return (result, retracted)
        }
    }

    @Test("shuffled and sequential ingestion leave the same standing events", arguments: engines)
    func shuffledAndSequentialIngestionAgree(engine: StoreEngine) async throws {
        let customers = 4
        var results: [[String: [LifecycleEvent]]] = []
        let ca = try TestSigning.authority()
        let signed = try Self.deliveries(signer: AppStoreSigner(ca: ca), customers: customers)
        var generator = SystemRandomNumberGenerator()
        for shuffled in [false, true] {
            let database = try await OwnDatabase.make(engine)
            defer { database.drop() }
            let store = try await database.open()
            let harness = try await ServerHarness(ca: ca, opened: (store, {}))
            harness.clock.set(TestSigning.signedDate.plus(days: 41))
            let app = try await harness.createApp(id: "app-events")
            let order = shuffled ? signed.shuffled(using: &generator) : signed.sorted { $0.signed < $1.signed }
            for delivery in order { try await Self.send(delivery, to: harness, app: app) }
            results.append(try await Self.standing(store, appId: app.appId, customers: customers).events)
            await harness.stop()
        }
        #expect(results[0].count == customers)
        #expect(results[1] == results[0])
        // The reproduction: one UNCANCELLATION per change, at d30 (the renewal's renewal info)
        // and d40; the first period's cancellation at d10, not d12.
        let t0 = TestSigning.signedDate
        #expect(
            results[0]["user-0"]?.filter { $0.type == .uncancellation || $0.type == .cancellation }.map {
                "\($0.type.rawValue)@\($0.occurredAt.millisecondsSince1970 - t0.millisecondsSince1970)"
            }.sorted()
                == [
                    "CANCELLATION@\(10 * AppStoreSigner.day)", "CANCELLATION@\(35 * AppStoreSigner.day)",
                    "UNCANCELLATION@\(30 * AppStoreSigner.day)", "UNCANCELLATION@\(40 * AppStoreSigner.day)",
                ].sorted())
    }

    /// Three instances (three servers, three stores) on one PostgreSQL database; each delivery
    /// goes to a random instance, about a third to two at once: the standing events equal those
    /// of one instance taking the deliveries in signed order.
    @Test(
        "three instances, random and doubled deliveries: the same standing events",
        .enabled(if: TestDatabase.postgresURL != nil, Comment(rawValue: TestDatabase.postgresSkip)))
    func threeInstancesAgreeWithOne() async throws {
        let customers = 6
        let ca = try TestSigning.authority()
        let signed = try Self.deliveries(signer: AppStoreSigner(ca: ca), customers: customers)

        let single = try await OwnDatabase.make(.postgres)
        defer { single.drop() }
        let reference = try await ServerHarness(ca: ca, opened: (try await single.open(), {}))
        reference.clock.set(TestSigning.signedDate.plus(days: 41))
        let referenceApp = try await reference.createApp(id: "app-events")
        for delivery in signed.sorted(by: { $0.signed < $1.signed }) {
            try await Self.send(delivery, to: reference, app: referenceApp)
        }
        let expected = try await Self.standing(reference.store, appId: referenceApp.appId, customers: customers)
        await reference.stop()

        let shared = try await OwnDatabase.make(.postgres)
        defer { shared.drop() }
        let first = try await ServerHarness(ca: ca, opened: (try await shared.open(), {}))
        var instances = [first]
        for _ in 0..<2 {
            instances.append(
                try await ServerHarness(ca: ca, secrets: first.secrets, opened: (try await shared.open(), {})))
        }
        for instance in instances { instance.clock.set(TestSigning.signedDate.plus(days: 41)) }
        let app = try await first.createApp(id: "app-events")
        var generator = SystemRandomNumberGenerator()
        let order = signed.shuffled(using: &generator)
        var doubled = 0
        // Six deliveries at a time, each to one or two random instances at once.
        for start in stride(from: 0, to: order.count, by: 6) {
            var targets: [(Delivery, ServerHarness)] = []
            for delivery in order[start..<min(order.count, start + 6)] {
                let chosen = instances.shuffled(using: &generator)
                targets.append((delivery, chosen[0]))
                if Int.random(in: 0..<3, using: &generator) == 0 {
                    targets.append((delivery, chosen[1]))
                    doubled += 1
                }
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (delivery, instance) in targets {
                    group.addTask { try await Self.send(delivery, to: instance, app: app) }
                }
                try await group.waitForAll()
            }
        }
        let got = try await Self.standing(first.store, appId: app.appId, customers: customers)
        for instance in instances { await instance.stop() }
        #expect(doubled > 0)
        #expect(got.events.count == customers)
        #expect(got.events == expected.events)
    }
}
