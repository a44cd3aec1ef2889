import AppStoreModels
import Foundation
import Storage
import Testing

@testable import StorekeeperServer

/// Valid stored keys are kept for `appRefreshMilliseconds` so that a GET does not read its
/// key's row each time; a revocation here applies at once, one made behind this instance's back
/// (another instance) within the interval.
@Suite struct APIKeyCacheTests {
    static func record(_ hash: String, revoked: Bool = false) -> APIKeyRecord {
        APIKeyRecord(
            id: "key-\(hash)", appId: "app", kind: .secret, hash: hash, createdAt: Timestamp(millisecondsSince1970: 0),
            revokedAt: revoked ? Timestamp(millisecondsSince1970: 1) : nil)
    }

    @Test func keepsValidKeysForTheIntervalOnly() {
        let cache = APIKeyCache(refreshInterval: .seconds(1))
        let start = ContinuousClock.now
        cache.remember(Self.record("a"), hash: "a", checkedAt: start)
        #expect(cache.record(hash: "a", now: start + .milliseconds(999))?.id == "key-a")
        #expect(cache.record(hash: "a", now: start + .seconds(1)) == nil)
        // Revoked, unknown or another hash's record: never kept.
        cache.remember(Self.record("b", revoked: true), hash: "b", checkedAt: start)
        cache.remember(nil, hash: "c", checkedAt: start)
        cache.remember(Self.record("x"), hash: "d", checkedAt: start)
        #expect(cache.record(hash: "b", now: start) == nil)
        #expect(cache.record(hash: "c", now: start) == nil)
        #expect(cache.record(hash: "d", now: start) == nil)
        // A read begun before a revocation here is not kept after it.
        cache.removeAll(now: start + .milliseconds(10))
        #expect(cache.record(hash: "a", now: start + .milliseconds(11)) == nil)
        cache.remember(Self.record("a"), hash: "a", checkedAt: start + .milliseconds(5))
        #expect(cache.record(hash: "a", now: start + .milliseconds(12)) == nil)
        cache.remember(Self.record("a"), hash: "a", checkedAt: start + .milliseconds(20))
        #expect(cache.record(hash: "a", now: start + .milliseconds(21))?.id == "key-a")
        // Zero keeps nothing.
        let none = APIKeyCache(refreshInterval: .zero)
        none.remember(Self.record("a"), hash: "a", checkedAt: start)
        #expect(none.record(hash: "a", now: start) == nil)
    }

    @Test func aKeyRevokedBehindTheServersBackIsRefusedWithinTheInterval() async throws {
        let harness = try await ServerHarness(configure: { $0.appRefreshMilliseconds = 2_000 })
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        // One route answered on the HTTP thread, one on the task pool: both authenticate.
        let paths = ["/v1/apps/\(app.appId)/customers/ann", "/v1/apps/\(app.appId)/webhooks"]
        for path in paths { #expect(try await harness.request("GET", path, key: app.secretKey).status == 200) }
        // Revoked in the database, as another instance would: still accepted from the cache…
        let hash = APIKeys.hash(app.secretKey)
        let keyId = try #require(try await harness.store.read { try $0.apiKey(hash: hash)?.id })
        let revokedAt = Timestamp(millisecondsSince1970: 1_767_225_600_000)
        #expect(try await harness.store.write { try $0.revokeAPIKey(id: keyId, at: revokedAt) })
        for path in paths { #expect(try await harness.request("GET", path, key: app.secretKey).status == 200) }
        // …and refused once the interval has passed.
        try await Task.sleep(for: .milliseconds(2_100))
        for path in paths { #expect(try await harness.request("GET", path, key: app.secretKey).status == 401) }
    }

    @Test func aKeyRevokedThroughThisServerIsRefusedAtOnce() async throws {
        let harness = try await ServerHarness(configure: { $0.appRefreshMilliseconds = 60_000 })
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        let path = "/v1/apps/\(app.appId)/customers/ann"
        #expect(try await harness.request("GET", path, key: app.secretKey).status == 200)
        let hash = APIKeys.hash(app.secretKey)
        let keyId = try #require(try await harness.store.read { try $0.apiKey(hash: hash)?.id })
        #expect(
            try await harness.request("DELETE", "/v1/admin/keys/\(keyId)", key: ServerHarness.adminKey).status == 204)
        #expect(try await harness.request("GET", path, key: app.secretKey).status == 401)
    }
}
