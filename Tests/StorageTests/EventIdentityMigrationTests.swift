import AppStoreModels
import Entitlements
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// Migration `0008_event_identity` on events stored with the counting ids: each is renamed to the
/// id the engine now derives for the same change (row, instant and content kept, the JSON's `id`
/// too); of two rows the counting ids gave one change, the first takes the new id and the other
/// keeps its old one; every row stands (`retracted_at` empty).
@Suite("Migration 0008: event identity")
struct EventIdentityMigrationTests {
    static let identifier = "0008_event_identity"
    static let previous = Array(Migration.all.prefix { $0.identifier != identifier })

    static func event(_ id: String, _ type: LifecycleEventType, day: Int64, change: ProductChange.Timing? = nil)
        -> LifecycleEvent
    {
        var event = LifecycleEvent(
            id: id, type: type, customerId: "ann", environment: .production, occurredAt: F.at(day),
            productId: "monthly", entitlementIds: ["pro"], transactionId: String(id.split(separator: "/")[1]),
            originalTransactionId: "t1", summary: "legacy")
        if let change {
            event.productChange = ProductChange(
                fromProductId: "monthly", toProductId: "yearly", kind: .crossgrade, timing: change,
                effectiveAt: F.at(30))
        }
        return event
    }

    @Test("counting ids become instant ids; a twice-reported change keeps one", arguments: Backend.enabled)
    func renamesLegacyEventIds(backend: Backend) async throws {
        let database = try await TestDatabase.make(backend)
        defer { Task { await database.drop() } }
        let connection = try PerAppKeysMigrationTests.connect(database)
        try Migrator.migrate(connection, migrations: Self.previous, apply: true)
        let legacy: [LifecycleEvent] = [
            Self.event("PRICE_INCREASE_CONSENT/t1/PENDING", .priceIncreaseConsent, day: 3),
            Self.event("PRODUCT_CHANGE/t1/yearly", .productChange, day: 5, change: .atNextRenewal),
            Self.event("PRODUCT_CHANGE/t1/yearly/withdrawn/1", .productChange, day: 6, change: .atNextRenewal),
            Self.event("CANCELLATION/t1/1", .cancellation, day: 10),
            Self.event("REFUND/t3/1", .refund, day: 20),
            Self.event("RENEWAL/t2", .renewal, day: 30),
            Self.event("PRODUCT_CHANGE/t2", .productChange, day: 30, change: .immediate),
            Self.event("UNCANCELLATION/t2/1", .uncancellation, day: 40),
            Self.event("UNCANCELLATION/t2/2", .uncancellation, day: 40),
        ]
        try connection.executeScript("BEGIN")
        let customerId = try { () throws -> Int64 in
            let tx = SQLStoreTransaction(connection: connection)
            _ = try tx.insertApp(F.app, at: F.at(0))
            let ann = try tx.ensureCustomer(appId: F.appId, appUserId: "ann", at: F.now)
            for event in legacy {
                // As the binary before 0008 wrote them (no `retracted_at` yet).
                try tx.execute(
                    """
                    INSERT INTO lifecycle_events (customer_id, event_id, environment, type, occurred_at, event_json,
                                                  created_at)
                    VALUES ($1, $2, $3, $4, $5, $6, $7)
                    """, .integer(ann.id), .text(event.id), .text("Production"), .text(event.type.rawValue),
                    SQLValue(event.occurredAt), SQLStoreTransaction.json(event), SQLValue(F.now))
            }
            return ann.id
        }()
        try connection.executeScript("COMMIT")

        try Migrator.migrate(connection, migrations: Migration.all, apply: true)
        let stored = try SQLStoreTransaction(connection: connection).events(
            customerId: customerId, after: nil, limit: 100)
        func ms(_ day: Int64) -> Int64 { F.at(day).millisecondsSince1970 }
        #expect(
            stored.map(\.event.id) == [
                "PRICE_INCREASE_CONSENT/t1/PENDING/\(ms(3))", "PRODUCT_CHANGE/t1/yearly/\(ms(5))",
                "PRODUCT_CHANGE/t1/yearly/withdrawn/\(ms(6))", "CANCELLATION/t1/\(ms(10))", "REFUND/t3/\(ms(20))",
                "RENEWAL/t2", "PRODUCT_CHANGE/t2", "UNCANCELLATION/t2/\(ms(40))", "UNCANCELLATION/t2/2",
            ])
        // Everything but the id is as stored; the id column and the JSON agree.
        for (before, after) in zip(legacy, stored) {
            var renamed = before
            renamed.id = after.event.id
            #expect(after.event == renamed)
            #expect(after.retractedAt == nil)
        }
        let ids = try connection.query(
            "SELECT event_id FROM lifecycle_events WHERE customer_id = $1 ORDER BY id", [.integer(customerId)])
        #expect(try ids.map { try $0.text(0) } == stored.map(\.event.id))
        connection.close()
    }
}
