import AppStoreModels
import Entitlements
import Foundation
import StorekeeperIngestion
import StorekeeperTesting
import Synchronization
import Testing

@testable import Storage

private typealias F = IngestionWorkload

/// Issue 15: Play snapshots through the one commit path on both engines: raw JSON, facts, owner,
/// state, events and acknowledgement jobs together; notifications idempotent by `messageId`;
/// the obfuscated account id, linked tokens and transfer policies deciding the owner.
@Suite struct GooglePlayIngestionTests {
    static let package = "com.example.play"
    static let settings = PlayAppSettings(appId: F.appId, packageName: package)
    static let catalog = ProductCatalog(products: [
        CatalogProduct(
            productId: "monthly", kind: .autoRenewable, subscriptionGroup: "premium", groupLevel: 2,
            duration: SubscriptionPeriod(value: 1, unit: .month), entitlementIds: ["pro"],
            referencePrice: Money(milliunits: 9990, currency: "USD")),
        CatalogProduct(
            productId: "plus", kind: .autoRenewable, subscriptionGroup: "premium", groupLevel: 1,
            duration: SubscriptionPeriod(value: 1, unit: .month), entitlementIds: ["pro", "plus"],
            referencePrice: Money(milliunits: 14990, currency: "USD")),
    ])

    static func snapshot(
        _ token: String, _ product: String = "monthly", read: Int64, state: PlaySubscriptionState = .active,
        expiry: Int64, order: String, acknowledged: Bool = false, account: String? = nil, linked: String? = nil,
        package: String = package
    ) throws -> VerifiedPlaySnapshot {
        let fact = PlaySubscriptionFact(
            packageName: package, purchaseToken: token, readAt: F.at(read), state: RawEnum(state),
            startTime: F.at(read),
            lineItems: [
                PlaySubscriptionLineItem(
                    productId: product, expiryTime: F.at(expiry), autoRenewEnabled: true,
                    latestSuccessfulOrderId: order)
            ], isAcknowledged: acknowledged, linkedPurchaseToken: linked, obfuscatedAccountId: account)
        return try VerifiedPlaySnapshot(
            fact: .playSubscription(fact), raw: "{\"kind\":\"androidpublisher#subscriptionPurchaseV2\",\"t\":\(read)}")
    }

    static func setUp(_ store: any Store) async throws {
        try await store.write { (tx) throws in
            try tx.saveApp(F.app, at: F.at(0))
            try tx.saveCatalog(appId: F.appId, catalog, at: F.at(0))
            try tx.savePlayAppSettings(settings, environments: F.app.environments, at: F.at(0))
        }
    }

    static func eventTypes(_ store: any Store, appUserId: String) async throws -> [String] {
        try await store.read { (reader) throws in
            guard let customer = try reader.customer(appId: F.appId, .appUserId(appUserId)) else { return [] }
            return try reader.events(customerId: customer.id, after: nil, limit: 100).map(\.event.id)
        }
    }

    static func message(_ id: String, token: String, type: Int64) -> NewPlayNotification {
        NewPlayNotification(
            appId: F.appId, messageId: id, packageName: package, kind: "subscription", notificationType: type,
            purchaseToken: token, eventTime: nil, body: "{\"message\":{\"messageId\":\"\(id)\"}}", receivedAt: F.at(0))
    }

    @Test(arguments: Backend.enabled)
    func postedPurchaseCommitsFactsStateEventsAndAnAcknowledgementJob(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await Self.setUp(store)
            let ingestor = PlayIngestor(writer: IngestionWriter(store: store))
            let snapshot = try Self.snapshot("tok-1", read: 1, expiry: 31, order: "GPA.1", account: "acct-alice")
            let commit = try await ingestor.postPurchase(
                settings: Self.settings, appUserId: "alice", policy: .transferToNewest, snapshot: snapshot,
                receivedAt: F.at(1))
            #expect(commit.outcome == .applied)
            #expect(commit.customerInfo?.activeEntitlementIds == ["pro"])
            #expect(commit.customerInfo?.entitlements["pro"]?.store == .playStore)
            #expect(try await Self.eventTypes(store, appUserId: "alice") == ["INITIAL_PURCHASE/GPA.1/monthly"])
            try await store.read { (reader) throws in
                let token = try reader.playPurchaseToken(appId: F.appId, purchaseToken: "tok-1")
                #expect(token?.latestRaw == snapshot.raw)
                #expect(try token?.customerId == reader.customer(appId: F.appId, .appUserId("alice"))?.id)
                #expect(try reader.customer(appId: F.appId, .appAccountToken("acct-alice"))?.appUserId == "alice")
                let jobs = try reader.sql("SELECT kind, payload FROM jobs ORDER BY id")
                #expect(try jobs.map { try $0.text(0) } == ["play_acknowledge"])
                let request = try AppStoreJSON.decode(
                    PlayAcknowledgementRequest.self, from: Data(try jobs[0].text(1).utf8))
                #expect(
                    request
                        == PlayAcknowledgementRequest(
                            appId: F.appId, packageName: Self.package, kind: .subscription, productId: "monthly",
                            purchaseToken: "tok-1"))
            }
            // Posting it again changes nothing and queues no second job.
            _ = try await ingestor.postPurchase(
                settings: Self.settings, appUserId: "alice", policy: .transferToNewest, snapshot: snapshot,
                receivedAt: F.at(2))
            try await store.read { (reader) throws in
                #expect(try reader.count("jobs") == 1)
                #expect(try reader.count("play_snapshots") == 1)
            }
        }
    }

    @Test(arguments: Backend.enabled)
    func notificationsAreIdempotentAndFindTheOwner(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await Self.setUp(store)
            let ingestor = PlayIngestor(writer: IngestionWriter(store: store))
            _ = try await ingestor.postPurchase(
                settings: Self.settings, appUserId: "alice", policy: .transferToNewest,
                snapshot: try Self.snapshot("tok-1", read: 1, expiry: 31, order: "GPA.1", account: "acct-alice"),
                receivedAt: F.at(1))
            // A renewal told by RTDN goes to the token's owner; its redelivery is a no-op.
            let renewal = try Self.snapshot("tok-1", read: 31, expiry: 61, order: "GPA.1..0", acknowledged: true)
            let first = try await ingestor.ingest(
                settings: Self.settings, notification: Self.message("m-1", token: "tok-1", type: 2),
                snapshots: [renewal], source: "notification", receivedAt: F.at(31))
            #expect(first.outcome == .applied)
            let again = try await ingestor.ingest(
                settings: Self.settings, notification: Self.message("m-1", token: "tok-1", type: 2),
                snapshots: [renewal], source: "notification", receivedAt: F.at(32))
            #expect(again.outcome == .duplicate)
            // A new token naming alice's obfuscated account id is alice's.
            let other = try Self.snapshot("tok-2", read: 40, expiry: 70, order: "GPA.2", account: "acct-alice")
            #expect(
                try await ingestor.ingest(
                    settings: Self.settings, notification: Self.message("m-2", token: "tok-2", type: 4),
                    snapshots: [other], source: "notification", receivedAt: F.at(40)
                ).outcome == .applied)
            // An upgrade's new token follows the token it replaces.
            let upgrade = try Self.snapshot("tok-3", "plus", read: 45, expiry: 75, order: "GPA.3", linked: "tok-1")
            #expect(
                try await ingestor.ingest(
                    settings: Self.settings, notification: Self.message("m-3", token: "tok-3", type: 4),
                    snapshots: [upgrade], source: "notification", receivedAt: F.at(45)
                ).outcome == .applied)
            // A token nobody can be found for waits unclaimed.
            let stranger = try Self.snapshot("tok-4", read: 46, expiry: 76, order: "GPA.4")
            #expect(
                try await ingestor.ingest(
                    settings: Self.settings, notification: Self.message("m-4", token: "tok-4", type: 4),
                    snapshots: [stranger], source: "notification", receivedAt: F.at(46)
                ).outcome == .unclaimed)
            #expect(
                try await Self.eventTypes(store, appUserId: "alice") == [
                    "INITIAL_PURCHASE/GPA.1/monthly", "RENEWAL/GPA.1..0/monthly", "INITIAL_PURCHASE/GPA.2/monthly",
                    "PRODUCT_CHANGE/GPA.3/plus",
                ])
            try await store.read { (reader) throws in
                #expect(try reader.count("play_notifications") == 4)
                let outcome = try reader.playNotification(appId: F.appId, messageId: "m-4")?.outcome
                #expect(outcome == "unclaimed")
                let alice = try reader.customer(appId: F.appId, .appUserId("alice"))!
                let info = try reader.customerInfo(customerId: alice.id, environment: .production)?.info
                #expect(info?.entitlements["plus"]?.isActive == true)
                #expect(info?.subscriptions["plus"]?.originalTransactionId == "tok-3")
                // Two tokens of one product: `subscriptions` shows the one giving access (tok-2),
                // not the replaced tok-1.
                #expect(info?.subscriptions["monthly"]?.originalTransactionId == "tok-2")
                #expect(info?.subscriptions["monthly"]?.status == .active)
                #expect(try reader.customer(appId: F.appId, .originalTransactionId("tok-4")) == nil)
            }
        }
    }

    @Test(arguments: Backend.enabled)
    func transferPoliciesApplyToTokensAndForeignPackagesAreRefused(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await Self.setUp(store)
            let ingestor = PlayIngestor(writer: IngestionWriter(store: store))
            let snapshot = try Self.snapshot("tok-1", read: 1, expiry: 31, order: "GPA.1")
            _ = try await ingestor.postPurchase(
                settings: Self.settings, appUserId: "alice", policy: .keepWithFirst, snapshot: snapshot,
                receivedAt: F.at(1))
            let bob = try await ingestor.postPurchase(
                settings: Self.settings, appUserId: "bob", policy: .keepWithFirst, snapshot: snapshot,
                receivedAt: F.at(2))
            #expect(bob.customerInfo?.activeEntitlementIds == [])
            let carol = try await ingestor.postPurchase(
                settings: Self.settings, appUserId: "carol", policy: .transferToNewest, snapshot: snapshot,
                receivedAt: F.at(3))
            #expect(carol.customerInfo?.activeEntitlementIds == ["pro"])
            #expect(try await Self.eventTypes(store, appUserId: "carol").contains { $0.hasPrefix("TRANSFER/") })
            try await store.read { (reader) throws in
                let alice = try reader.customer(appId: F.appId, .appUserId("alice"))!
                #expect(
                    try reader.customerInfo(customerId: alice.id, environment: .production)?.info.activeEntitlementIds
                        == [])
            }
            let foreign = try Self.snapshot("tok-9", read: 1, expiry: 31, order: "GPA.9", package: "com.other")
            await #expect(throws: IngestionError.self) {
                _ = try await ingestor.postPurchase(
                    settings: Self.settings, appUserId: "alice", policy: .keepWithFirst, snapshot: foreign,
                    receivedAt: F.at(4))
            }
            // A license tester's purchase is the sandbox, which this app no longer claims.
            try await store.write { (tx) throws in
                try tx.savePlayAppSettings(Self.settings, environments: [.production], at: F.at(4))
            }
            let tester = PlaySubscriptionFact(
                packageName: Self.package, purchaseToken: "tok-test", readAt: F.at(4), state: RawEnum(.active),
                startTime: F.at(4),
                lineItems: [
                    PlaySubscriptionLineItem(
                        productId: "monthly", expiryTime: F.at(5), autoRenewEnabled: true,
                        latestSuccessfulOrderId: "GPA.T")
                ], isAcknowledged: true, isTestPurchase: true)
            do {
                _ = try await ingestor.postPurchase(
                    settings: Self.settings, appUserId: "alice", policy: .keepWithFirst,
                    snapshot: try VerifiedPlaySnapshot(fact: .playSubscription(tester), raw: "{}"), receivedAt: F.at(4))
                Issue.record("a sandbox purchase was accepted by a production-only app")
            } catch let error as IngestionError {
                #expect(error.code == .environmentNotAccepted)
            }
            #expect(throws: IngestionError.self) {
                _ = try VerifiedPlaySnapshot(
                    fact: try Self.snapshot("tok-1", read: 1, expiry: 31, order: "GPA.1").fact,
                    raw: String(repeating: "x", count: VerifiedPlaySnapshot.maximumRawBytes + 1))
            }
        }
    }

    /// Fails each call while `failures` lasts, then acknowledges; counts calls.
    final class ScriptedAcknowledger: PlayPurchaseAcknowledging {
        let state = Mutex((failures: 0, calls: 0))
        init(failures: Int) { state.withLock { $0.failures = failures } }
        func acknowledge(_ request: PlayAcknowledgementRequest) async throws(PlayAcknowledgementFailure) {
            let fail = state.withLock { state -> Bool in
                state.calls += 1
                guard state.failures > 0 else { return false }
                state.failures -= 1
                return true
            }
            if fail { throw PlayAcknowledgementFailure(code: "http_503", message: "unavailable", isRetryable: true) }
        }
    }

    @Test(arguments: Backend.enabled)
    func acknowledgementJobRecordsAttemptsAndReportsFailures(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await Self.setUp(store)
            let ingestor = PlayIngestor(writer: IngestionWriter(store: store))
            _ = try await ingestor.postPurchase(
                settings: Self.settings, appUserId: "alice", policy: .transferToNewest,
                snapshot: try Self.snapshot("tok-1", read: 1, expiry: 31, order: "GPA.1"), receivedAt: F.at(1))
            let acknowledger = ScriptedAcknowledger(failures: 1)
            let job = PlayAcknowledgementJob(
                store: store, acknowledger: acknowledger, clock: ServerClock(now: { F.at(1) }))
            func claim(_ owner: String) async throws -> JobRecord {
                try await store.write { (tx) throws in
                    try tx.claimJobs(
                        kind: PlayIngestor.acknowledgeJobKind, owner: owner, now: F.at(10), leaseMilliseconds: 60_000,
                        limit: 1)
                }[0]
            }
            let first = try await claim("worker-1")
            #expect(await job.run(first, lease: JobLease(jobId: first.id, owner: "worker-1")) == .retry("http_503"))
            let report = try await PlayAcknowledgementJob.report(appId: F.appId, store: store)
            #expect(report.map(\.purchaseToken) == ["tok-1"])
            #expect(report.map(\.acknowledgementError) == ["http_503: unavailable"])
            try await store.write { (tx) throws in
                _ = try tx.failJob(id: first.id, owner: "worker-1", error: "http_503", retryAt: F.at(5), at: F.at(1))
            }
            let second = try await claim("worker-2")
            #expect(await job.run(second, lease: JobLease(jobId: second.id, owner: "worker-2")) == .completed)
            #expect(acknowledger.state.withLock { $0.calls } == 2)
            #expect(try await PlayAcknowledgementJob.report(appId: F.appId, store: store) == [])
            try await store.read { (reader) throws in
                let token = try reader.playPurchaseToken(appId: F.appId, purchaseToken: "tok-1")
                #expect(token?.isAcknowledged == true)
                #expect(token?.acknowledgementAttempts == 2)
                #expect(try reader.job(id: second.id)?.completedAt != nil)
            }
        }
    }
}
