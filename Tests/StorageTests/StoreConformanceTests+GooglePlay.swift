import AppStoreModels
import Entitlements
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionWorkload

/// Google Play's tables (migration `0014_google_play`) on both engines: one package name per
/// app and environment, snapshots verbatim with the latest per token kept whatever the order,
/// acknowledgement attempts, RTDN messages unique by `messageId`, and Play facts among the
/// customer's facts.
extension StoreConformanceTests {
    static func playApp(_ id: String, environments: [AppStoreEnvironment] = [.production, .sandbox]) -> AppRecord {
        var app = F.app
        app.id = id
        app.environments = environments
        return app
    }

    static func playSnapshot(
        token: String = "tok-1", read: Int64, state: PlaySubscriptionState = .active, expiry: Int64 = 30,
        acknowledged: Bool = false, order: String = "GPA.1"
    ) -> NewPlayFact {
        let fact = PlaySubscriptionFact(
            packageName: "com.example.play", purchaseToken: token, readAt: F.at(read), state: RawEnum(state),
            startTime: F.at(0),
            lineItems: [
                PlaySubscriptionLineItem(
                    productId: "monthly", expiryTime: F.at(expiry), autoRenewEnabled: true,
                    latestSuccessfulOrderId: order)
            ], isAcknowledged: acknowledged)
        let raw = "{\"subscriptionState\":\"\(state.rawValue)\",\"read\":\(read),\"order\":\"\(order)\"}"
        return NewPlayFact(
            appId: F.appId, raw: raw, fact: .playSubscription(fact), source: "test", receivedAt: F.at(read))
    }

    @Test("a package name belongs to one app per environment", arguments: Backend.enabled)
    func playPackageNames(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await store.write { (tx) throws in
                _ = try tx.insertApp(F.app, at: F.at(0))
                _ = try tx.insertApp(Self.playApp("app-2"), at: F.at(0))
                _ = try tx.insertApp(Self.playApp("app-3", environments: [.sandbox]), at: F.at(0))
                let settings = PlayAppSettings(
                    appId: F.appId, packageName: "com.example.play", serviceAccountKey: "sk1:sealed",
                    rtdnAudience: "https://example.com/push", pushServiceAccountEmail: "push@example.iam")
                #expect(try tx.savePlayAppSettings(settings, environments: [.production], at: F.at(1)) == 1)
                #expect(try tx.savePlayAppSettings(settings, environments: [.production], at: F.at(2)) == 2)
            }
            // Another app cannot take the package in an environment it is claimed in …
            await #expect(throws: StoreError.self) {
                try await store.write { (tx) throws in
                    try tx.savePlayAppSettings(
                        PlayAppSettings(appId: "app-2", packageName: "com.example.play"),
                        environments: [.production, .sandbox], at: F.at(3))
                }
            }
            // … but may in one it is not (a sandbox-only twin).
            _ = try await store.write { (tx) throws in
                try tx.savePlayAppSettings(
                    PlayAppSettings(appId: "app-3", packageName: "com.example.play", acknowledgePurchases: false),
                    environments: [.sandbox], at: F.at(3))
            }
            try await store.read { (reader) throws in
                let saved = try reader.playAppSettings(appId: F.appId)
                #expect(
                    saved
                        == PlayAppSettings(
                            appId: F.appId, packageName: "com.example.play", serviceAccountKey: "sk1:sealed",
                            rtdnAudience: "https://example.com/push", pushServiceAccountEmail: "push@example.iam",
                            acknowledgePurchases: true, version: 2))
                #expect(try reader.playAppSettings(appId: "app-2") == nil)
                #expect(try reader.playAppSettings(appId: "app-3")?.acknowledgePurchases == false)
                #expect(try reader.appId(playPackageName: "com.example.play", environment: .production) == F.appId)
                #expect(try reader.appId(playPackageName: "com.example.play", environment: .sandbox) == "app-3")
                #expect(try reader.appId(playPackageName: "com.other", environment: .production) == nil)
            }
        }
    }

    /// Review finding: the package was claimed in the environments the app had when its Play
    /// side was saved, so a Sandbox added later refused every test purchase and a dropped
    /// Production stayed blocked for other apps. Saving the app re-claims it.
    @Test("the Play package follows the app's environments", arguments: Backend.enabled)
    func playPackageFollowsEnvironments(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            let package = "com.example.play"
            try await store.write { (tx) throws in
                _ = try tx.insertApp(Self.playApp(F.appId, environments: [.production]), at: F.at(0))
                _ = try tx.insertApp(Self.playApp("app-2", environments: [.production]), at: F.at(0))
                _ = try tx.savePlayAppSettings(
                    PlayAppSettings(appId: F.appId, packageName: package), environments: [.production], at: F.at(1))
                try tx.saveApp(Self.playApp(F.appId, environments: [.production, .sandbox]), at: F.at(2))
            }
            try await store.read { (reader) throws in
                #expect(try reader.appId(playPackageName: package, environment: .production) == F.appId)
                #expect(try reader.appId(playPackageName: package, environment: .sandbox) == F.appId)
            }
            // Production dropped: another app may take the package there.
            try await store.write { (tx) throws in
                try tx.saveApp(Self.playApp(F.appId, environments: [.sandbox]), at: F.at(3))
                _ = try tx.savePlayAppSettings(
                    PlayAppSettings(appId: "app-2", packageName: package), environments: [.production], at: F.at(4))
            }
            // Taking Production back is a conflict now, and changes nothing.
            await #expect(throws: StoreError.self) {
                try await store.write { (tx) throws in
                    try tx.saveApp(Self.playApp(F.appId, environments: [.production, .sandbox]), at: F.at(5))
                }
            }
            try await store.read { (reader) throws in
                #expect(try reader.app(id: F.appId)?.environments == [.sandbox])
                #expect(try reader.appId(playPackageName: package, environment: .production) == "app-2")
                #expect(try reader.appId(playPackageName: package, environment: .sandbox) == F.appId)
            }
        }
    }

    @Test("Play snapshots verbatim; the latest per token whatever the order", arguments: Backend.enabled)
    func playSnapshots(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            let first = Self.playSnapshot(read: 1)
            let later = Self.playSnapshot(read: 31, expiry: 60, order: "GPA.1..0")
            // Two reads at one instant: the greater (fact, raw) is kept whichever came first.
            let tieA = Self.playSnapshot(read: 40, state: .canceled, expiry: 60, order: "GPA.1..0")
            let tieB = Self.playSnapshot(read: 40, state: .active, expiry: 60, order: "GPA.1..0")
            try await store.write { (tx) throws in
                _ = try tx.insertApp(F.app, at: F.at(0))
                #expect(try tx.insertPlayFact(later).isDuplicate == false)
                #expect(try tx.insertPlayFact(first).isDuplicate == false)
                #expect(try tx.insertPlayFact(first).isDuplicate)
                let token = try tx.playPurchaseToken(appId: F.appId, purchaseToken: "tok-1")
                #expect(token?.latestReadAt == F.at(31))
                #expect(token?.latestRaw == later.raw)
                #expect(token?.latestFact == later.fact)
                #expect(token?.productId == "monthly")
                #expect(token?.customerId == nil)
                _ = try tx.insertPlayFact(tieB)
                _ = try tx.insertPlayFact(tieA)
            }
            let kept = try await store.read { (reader) throws in
                try reader.playPurchaseToken(appId: F.appId, purchaseToken: "tok-1")?.latestRaw
            }
            let expected = [tieA, tieB].max { lhs, rhs in
                guard case .playSubscription(let left) = lhs.fact, case .playSubscription(let right) = rhs.fact else {
                    return false
                }
                let l = SQLStoreTransaction.jsonText(left)
                let r = SQLStoreTransaction.jsonText(right)
                return l != r ? l < r : lhs.raw < rhs.raw
            }!
            #expect(kept == expected.raw)
            try await store.read { (reader) throws in
                #expect(try reader.count("play_snapshots") == 3)
                let rows = try reader.sql("SELECT raw_json FROM play_snapshots WHERE read_at = $1", SQLValue(F.at(40)))
                #expect(try rows.map { try $0.text(0) } == [expected.raw])
            }
        }
    }

    @Test("Play facts are the owner's facts; acknowledgements and RTDN messages", arguments: Backend.enabled)
    func playFactsAcknowledgementsAndMessages(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            let snapshot = Self.playSnapshot(read: 1)
            let message = NewPlayNotification(
                appId: F.appId, messageId: "m-1", packageName: "com.example.play", kind: "subscription",
                notificationType: 4, purchaseToken: "tok-1", eventTime: F.at(1), body: "{\"message\":{}}",
                receivedAt: F.at(1))
            let customerId = try await store.write { (tx) throws -> Int64 in
                _ = try tx.insertApp(F.app, at: F.at(0))
                let customer = try tx.ensureCustomer(appId: F.appId, appUserId: "alice", at: F.at(1))
                _ = try tx.claimOriginalTransaction("tok-1", customerId: customer.id, at: F.at(1))
                _ = try tx.insertPlayFact(snapshot)
                guard case .inserted(let row) = try tx.insertPlayNotification(message) else {
                    Issue.record("the first message was not inserted")
                    return customer.id
                }
                #expect(try tx.insertPlayNotification(message) == .duplicate)
                try tx.finishPlayNotification(id: row, outcome: "applied", at: F.at(1))
                try tx.recordPlayAcknowledgement(
                    appId: F.appId, purchaseToken: "tok-1", acknowledged: false, error: "http_503: unavailable",
                    at: F.at(1))
                return customer.id
            }
            try await store.read { (reader) throws in
                #expect(try reader.facts(customerId: customerId) == [snapshot.fact])
                #expect(try reader.factJSON(customerId: customerId).map { try $0.decode() } == [snapshot.fact])
                let stored = try reader.storedFacts(
                    customerId: customerId, kind: .playSubscription, after: nil, limit: 10)
                #expect(stored.map(\.raw) == [snapshot.raw])
                #expect(stored.map(\.originalTransactionId) == ["tok-1"])
                let pending = try reader.unacknowledgedPlayPurchases(appId: F.appId, limit: 10)
                #expect(pending.map(\.purchaseToken) == ["tok-1"])
                #expect(pending.map(\.acknowledgementAttempts) == [1])
                #expect(pending.map(\.acknowledgementError) == ["http_503: unavailable"])
                #expect(pending.map(\.customerId) == [customerId])
                let record = try reader.playNotification(appId: F.appId, messageId: "m-1")
                #expect(record?.outcome == "applied")
                #expect(record?.body == "{\"message\":{}}")
                #expect(record?.notificationType == 4)
            }
            try await store.write { (tx) throws in
                try tx.recordPlayAcknowledgement(
                    appId: F.appId, purchaseToken: "tok-1", acknowledged: true, error: nil, at: F.at(2))
            }
            try await store.read { (reader) throws in
                #expect(try reader.unacknowledgedPlayPurchases(appId: F.appId, limit: 10) == [])
                let token = try reader.playPurchaseToken(appId: F.appId, purchaseToken: "tok-1")
                #expect(token?.isAcknowledged == true)
                #expect(token?.acknowledgementAttempts == 2)
            }
        }
    }
}
