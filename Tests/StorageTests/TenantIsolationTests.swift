import AppStoreModels
import Entitlements
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// Every uniqueness key is per app: the same signed payload stored for one app is stored for
/// another too (twin apps with one bundle id and environment), a replay within an app stays a
/// no-op, and each app reads only its own rows.
@Suite("Tenant isolation in storage")
struct TenantIsolationTests {
    /// `F.app`'s twin: the same bundle id, appAppleId and environments, another tenant.
    static let twin = AppRecord(
        id: "app-2", bundleId: F.app.bundleId, appAppleId: F.app.appAppleId, environments: F.app.environments)

    /// The rows one App Store notification makes for `appId`, as `IngestionWorkload.ingest`
    /// writes them (the same UUID, transaction, renewal info and payload for every app).
    struct Rows {
        var notification: NewNotification
        var transaction: NewTransaction
        var renewal: NewRenewalInfo

        init(_ source: IngestionWorkload.Notification, appId: String) {
            notification = NewNotification(
                appId: appId, notificationUUID: source.uuid, type: source.type, subtype: nil,
                environment: .production, originalTransactionId: source.transaction.originalTransactionId,
                signedDate: source.transaction.signedDate, signedPayload: source.signedPayload,
                fact: source.notificationFact, receivedAt: F.now)
            transaction = NewTransaction(
                appId: appId, jws: "jws.\(source.transaction.transactionId)", fact: source.transaction,
                source: "notification", receivedAt: F.now)
            renewal = NewRenewalInfo(
                appId: appId, jws: "jws.renewal", fact: source.renewal!, source: "notification", receivedAt: F.now)
        }

        /// Inserts the three rows; whether each was new.
        func insert(in tx: any StoreTransaction) throws -> [Bool] {
            [
                !(try tx.insertNotification(notification).isDuplicate),
                !(try tx.insertTransaction(transaction).isDuplicate),
                !(try tx.insertRenewalInfo(renewal).isDuplicate),
            ]
        }
    }

    @Test(
        "the same notification, transaction and renewal info are stored for each of two apps",
        arguments: Backend.enabled)
    func sameFactsForTwinApps(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await F.setUp(store)
            try await store.write { tx in
                try tx.saveApp(Self.twin, at: F.at(0))
                try tx.saveCatalog(appId: Self.twin.id, F.catalog, at: F.at(0))
            }
            let source = F.notifications(customers: 1, perCustomer: 2)
            let original = source[0].transaction.originalTransactionId
            // The same app user id in both apps claims the same purchase: two customers.
            let (first, second) = try await store.write { tx in
                let first = try tx.ensureCustomer(appId: F.appId, appUserId: "ann", at: F.now)
                let second = try tx.ensureCustomer(appId: Self.twin.id, appUserId: "ann", at: F.now)
                try tx.claimOriginalTransaction(original, customerId: first.id, at: F.now)
                try tx.claimOriginalTransaction(original, customerId: second.id, at: F.now)
                return (first.id, second.id)
            }
            #expect(first != second)

            let inserted = try await store.write { tx in
                [
                    try Rows(source[0], appId: F.appId).insert(in: tx),
                    try Rows(source[0], appId: Self.twin.id).insert(in: tx),
                    // A replay within either app stays a no-op.
                    try Rows(source[0], appId: F.appId).insert(in: tx),
                    try Rows(source[0], appId: Self.twin.id).insert(in: tx),
                ]
            }
            #expect(
                inserted == [[true, true, true], [true, true, true], [false, false, false], [false, false, false]])

            // The bulk inserts keep the same per-app keys: app 2 gets the second version only.
            let bulk = try await store.write { tx in
                (
                    try tx.insertTransactions([
                        Rows(source[0], appId: Self.twin.id).transaction,
                        Rows(source[1], appId: Self.twin.id).transaction,
                    ]),
                    try tx.insertRenewalInfos([
                        Rows(source[0], appId: Self.twin.id).renewal, Rows(source[1], appId: Self.twin.id).renewal,
                    ])
                )
            }
            #expect(bulk.0 == 1)
            #expect(bulk.1 == 1)

            let expectedFirst: [Fact] = [
                .transaction(source[0].transaction), .renewalInfo(source[0].renewal!),
                .notification(source[0].notificationFact),
            ]
            let expectedSecond: [Fact] = [
                .transaction(source[0].transaction), .transaction(source[1].transaction),
                .renewalInfo(source[0].renewal!), .renewalInfo(source[1].renewal!),
                .notification(source[0].notificationFact),
            ]
            let (factsFirst, factsSecond, recordFirst, recordSecond, counts) = try await store.read { reader in
                (
                    try reader.facts(customerId: first), try reader.facts(customerId: second),
                    try reader.notification(appId: F.appId, uuid: source[0].uuid),
                    try reader.notification(appId: Self.twin.id, uuid: source[0].uuid),
                    [
                        try reader.notificationCount(appId: F.appId),
                        try reader.notificationCount(appId: Self.twin.id),
                    ]
                )
            }
            #expect(factsFirst == expectedFirst)
            #expect(factsSecond == expectedSecond)
            #expect(recordFirst?.appId == F.appId)
            #expect(recordSecond?.appId == Self.twin.id)
            #expect(recordFirst?.signedPayload == source[0].signedPayload)
            #expect(recordSecond?.signedPayload == source[0].signedPayload)
            #expect(recordFirst?.id != recordSecond?.id)
            #expect(counts == [1, 1])
            #expect(try await store.read { try $0.notification(appId: "app-3", uuid: source[0].uuid) } == nil)
        }
    }

    @Test(
        "a job's dedupe key is unique within its app; a job of no app dedupes among those", arguments: Backend.enabled)
    func jobDedupePerApp(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await F.setUp(store)
            _ = try await store.write { tx in try tx.saveApp(Self.twin, at: F.at(0)) }
            let t0 = F.at(1)
            let key = "consumption_request:same-uuid"
            let ids = try await store.write { tx in
                [
                    try tx.enqueueJob(
                        appId: F.appId, kind: "consumption_request", payload: "{}", runAt: t0, dedupeKey: key, at: t0),
                    try tx.enqueueJob(
                        appId: Self.twin.id, kind: "consumption_request", payload: "{}", runAt: t0, dedupeKey: key,
                        at: t0),
                    try tx.enqueueJob(
                        appId: nil, kind: "consumption_request", payload: "{}", runAt: t0, dedupeKey: key, at: t0),
                    // Replays, each in its own scope.
                    try tx.enqueueJob(
                        appId: F.appId, kind: "consumption_request", payload: "{}", runAt: t0, dedupeKey: key, at: t0),
                    try tx.enqueueJob(
                        appId: Self.twin.id, kind: "consumption_request", payload: "{}", runAt: t0, dedupeKey: key,
                        at: t0),
                    try tx.enqueueJob(
                        appId: nil, kind: "consumption_request", payload: "{}", runAt: t0, dedupeKey: key, at: t0),
                ]
            }
            let first = try #require(ids[0], "the first app's job was not queued")
            let second = try #require(ids[1], "the second app's job with the same dedupe key was not queued")
            let global = try #require(ids[2], "the job of no app with the same dedupe key was not queued")
            #expect(Set([first, second, global]).count == 3)
            #expect(Array(ids.suffix(3)) == [nil, nil, nil])
            let apps = try await store.read { reader in
                try [first, second, global].map { id in try reader.job(id: id)?.appId }
            }
            #expect(apps == [F.appId, Self.twin.id, nil])
        }
    }
}
