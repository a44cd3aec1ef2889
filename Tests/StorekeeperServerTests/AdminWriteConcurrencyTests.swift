import AppStoreTrust
import Foundation
import SecretSealing
import Storage
import StorekeeperIngestion
import StorekeeperTesting
import Testing

/// Issue 17, admin writes, as an operator scaling out sees them: two instances (two in-process
/// servers, each with its own store) on one database, 20 rounds of writes sent to both at once.
/// PUTs changing different fields both survive (or, with If-Match, exactly one is 412); the same
/// app id created through both gives one 201 and one 409; the same for catalogs and webhook
/// endpoints. On SQLite (one file, two stores) and on PostgreSQL (a database of the test's own).
@Suite(.serialized)
struct AdminWriteConcurrencyTests {
    static let rounds = 20
    static let admin = ServerHarness.adminKey

    @Test func twoInstancesOnSQLite() async throws {
        try await run(.sqlite)
    }

    @Test(.enabled(if: TestDatabase.postgresURL != nil, Comment(rawValue: TestDatabase.postgresSkip)))
    func twoInstancesOnPostgreSQL() async throws {
        try await run(.postgres)
    }

    private func run(_ engine: StoreEngine) async throws {
        let database = try await OwnDatabase.make(engine)
        // Instances sharing a database share its secrets key.
        let secrets = StoredSecrets(sealer: SecretSealer(key: try SecretsKey.generate()))
        let first = try await ServerHarness(
            secrets: secrets, opened: (try await database.open(), {}), webhookAllowedDestinations: ["127.0.0.1"])
        let second = try await ServerHarness(
            ca: first.ca, secrets: secrets, opened: (try await database.open(), {}),
            webhookAllowedDestinations: ["127.0.0.1"])
        do {
            let fixture = try await Fixture(first, second)
            try await fixture.concurrentPUTsChangingDifferentFieldsBothSurvive()
            try await fixture.concurrentPUTsWithIfMatchGiveOne412()
            try await fixture.duplicateCreateGivesOne201AndOne409()
            try await fixture.concurrentCatalogPUTs()
            try await fixture.concurrentEndpointPUTs()
        } catch {
            await second.stop()
            await first.stop()
            database.drop()
            throw error
        }
        await second.stop()
        await first.stop()
        database.drop()
    }

    private struct Fixture {
        let first: ServerHarness
        let second: ServerHarness
        let app: ServerHarness.AppKeys
        /// A second root the app trusts in even rounds and an operator removes in odd ones.
        let extraRoot: String

        init(_ first: ServerHarness, _ second: ServerHarness) async throws {
            self.first = first
            self.second = second
            app = try await first.createApp()
            extraRoot = try TestSigning.authority(name: "Removed Root").root.pem
        }

        var appPath: String { "/v1/admin/apps/\(app.appId)" }

        func view() async throws -> TestResponse {
            let view = try await first.request("GET", appPath, key: AdminWriteConcurrencyTests.admin)
            #expect(view.status == 200)
            return view
        }

        /// The issue's case: one operator removes a root through one instance while another turns
        /// a flag through the other. Both answers are 200 and both changes are there afterwards.
        func concurrentPUTsChangingDifferentFieldsBothSurvive() async throws {
            var lost: [Int] = []
            for round in 0..<AdminWriteConcurrencyTests.rounds {
                let roots = round % 2 == 0 ? [first.ca.root.pem] : [first.ca.root.pem, extraRoot]
                let online = round % 2 == 0
                async let roots200 = first.request(
                    "PUT", appPath, key: AdminWriteConcurrencyTests.admin, json: ["rootCertificatesPEM": roots])
                async let flag200 = second.request(
                    "PUT", appPath, key: AdminWriteConcurrencyTests.admin, json: ["onlineVerification": online])
                let (a, b) = try await (roots200, flag200)
                #expect(a.status == 200, "round \(round): \(a.text)")
                #expect(b.status == 200, "round \(round): \(b.text)")
                let view = try await view()
                let rootCount = (view.json["rootCertificates"] as? [String])?.count
                if rootCount != roots.count || view.json["onlineVerification"] as? Bool != online { lost.append(round) }
            }
            #expect(lost == [], "rounds with a lost update: \(lost)")
        }

        /// Both PUTs name the version both read: exactly one applies, the other is 412 naming
        /// the version the winner made; the version moves by one per round.
        func concurrentPUTsWithIfMatchGiveOne412() async throws {
            for round in 0..<AdminWriteConcurrencyTests.rounds {
                let before = try await view()
                let etag = try #require(before.header("ETag"))
                let version = try #require(before.json["version"] as? Int)
                async let one = first.request(
                    "PUT", appPath, key: AdminWriteConcurrencyTests.admin,
                    json: ["transferPolicy": round % 2 == 0 ? "share" : "keep_with_first"], headers: ["If-Match": etag])
                async let other = second.request(
                    "PUT", appPath, key: AdminWriteConcurrencyTests.admin, json: ["legacyReceiptFlow": round % 2 == 0],
                    headers: ["If-Match": etag])
                let answers = try await [one, other]
                #expect(answers.map(\.status).sorted() == [200, 412], "round \(round): \(answers.map(\.text))")
                let refused = answers.first { $0.status == 412 }
                #expect(refused?.errorCode == "version_mismatch")
                #expect(refused?.header("ETag") == "\"\(version + 1)\"")
                #expect(try await view().json["version"] as? Int == version + 1)
            }
        }

        /// The same new id through both instances at once: one 201, one 409 `app_exists`, and the
        /// stored app is the one the 201 answered.
        func duplicateCreateGivesOne201AndOne409() async throws {
            for round in 0..<AdminWriteConcurrencyTests.rounds {
                let id = "dup-\(round)-\(uniqueDigits())"
                func body(_ bundleId: String) -> [String: Any] {
                    [
                        "id": id, "bundleId": bundleId, "environments": ["Sandbox"],
                        "rootCertificatesPEM": [first.ca.root.pem],
                    ]
                }
                async let one = first.request(
                    "POST", "/v1/admin/apps", key: AdminWriteConcurrencyTests.admin, json: body("com.first"))
                async let other = second.request(
                    "POST", "/v1/admin/apps", key: AdminWriteConcurrencyTests.admin, json: body("com.second"))
                let answers = try await [one, other]
                #expect(answers.map(\.status).sorted() == [201, 409], "round \(round): \(answers.map(\.text))")
                #expect(answers.first { $0.status == 409 }?.errorCode == "app_exists")
                let winner = answers.first { $0.status == 201 }?.json["bundleId"] as? String
                let stored = try await second.request(
                    "GET", "/v1/admin/apps/\(id)", key: AdminWriteConcurrencyTests.admin)
                #expect(stored.json["bundleId"] as? String == winner, "round \(round)")
                #expect(stored.header("ETag") == "\"1\"")
            }
        }

        /// Catalog PUTs replace the document: with If-Match one of two is 412; without, both
        /// apply one after the other (the version moves by two, the stored catalog is one of them).
        func concurrentCatalogPUTs() async throws {
            let path = "/v1/apps/\(app.appId)/catalog"
            func catalog(_ productId: String) -> [String: Any] {
                ["products": [["productId": productId, "kind": "NON_CONSUMABLE", "entitlementIds": ["pro"]]]]
            }
            for round in 0..<AdminWriteConcurrencyTests.rounds {
                let before = try await first.request("GET", path, key: app.secretKey)
                let etag = try #require(before.header("ETag"))
                let version = try #require(before.json["version"] as? Int)
                async let one = first.request(
                    "PUT", path, key: app.secretKey, json: catalog("p.first.\(round)"), headers: ["If-Match": etag])
                async let other = second.request(
                    "PUT", path, key: app.secretKey, json: catalog("p.second.\(round)"), headers: ["If-Match": etag])
                let answers = try await [one, other]
                #expect(answers.map(\.status).sorted() == [200, 412], "round \(round): \(answers.map(\.text))")
                #expect(answers.first { $0.status == 412 }?.header("ETag") == "\"\(version + 1)\"")

                async let plain = first.request("PUT", path, key: app.secretKey, json: catalog("q.first.\(round)"))
                async let plainToo = second.request("PUT", path, key: app.secretKey, json: catalog("q.second.\(round)"))
                let both = try await [plain, plainToo]
                #expect(both.map(\.status) == [200, 200], "round \(round): \(both.map(\.text))")
                #expect(Set(both.compactMap { $0.header("ETag") }) == ["\"\(version + 2)\"", "\"\(version + 3)\""])
            }
        }

        /// Two PUTs changing different fields of one endpoint through both instances: both survive.
        func concurrentEndpointPUTs() async throws {
            let created = try await first.request(
                "POST", "/v1/apps/\(app.appId)/webhooks", key: app.secretKey, json: ["url": "http://127.0.0.1:9/start"])
            #expect(created.status == 201)
            let path = "/v1/apps/\(app.appId)/webhooks/\(try #require(created.json["id"] as? String))"
            var lost: [Int] = []
            for round in 0..<AdminWriteConcurrencyTests.rounds {
                let url = "http://127.0.0.1:9/round-\(round)"
                let enabled = round % 2 == 1
                async let moved = first.request("PUT", path, key: app.secretKey, json: ["url": url])
                async let toggled = second.request("PUT", path, key: app.secretKey, json: ["enabled": enabled])
                let answers = try await [moved, toggled]
                #expect(answers.map(\.status) == [200, 200], "round \(round): \(answers.map(\.text))")
                let list = try await second.request("GET", "/v1/apps/\(app.appId)/webhooks", key: app.secretKey)
                let endpoint = (list.json["endpoints"] as? [[String: Any]])?.first
                if endpoint?["url"] as? String != url || endpoint?["enabled"] as? Bool != enabled { lost.append(round) }
                #expect(endpoint?["version"] as? Int == 2 * round + 3)
            }
            #expect(lost == [], "rounds with a lost update: \(lost)")
        }
    }
}
