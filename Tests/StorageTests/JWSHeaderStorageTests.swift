import AppStoreModels
import Entitlements
import Foundation
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// Migration `0029_jws_headers`: a signed transaction's long JWS header (Apple's certificate
/// chain) is stored once in `jws_headers`, the row keeps its digest and the rest, and every
/// read gives back the exact text that was written.
@Suite("Signed transactions' JWS headers stored once")
struct JWSHeaderStorageTests {
    /// Base64url-like text of `count` characters, different for each `seed`.
    static func text(_ count: Int, seed: UInt64) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        return String(
            (0..<count).map { _ in
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                return alphabet[Int(state % 64)]
            })
    }

    /// A JWS of Apple's shape: `header.payload.signature`.
    static func jws(header: String, seed: UInt64) -> String {
        header + "." + text(900, seed: seed) + "." + text(86, seed: seed + 1)
    }

    static let chainA = text(2_200, seed: 1)
    static let chainB = text(2_300, seed: 2)
    /// A header without a chain: shorter than `StoredJWS.minimumSharedHeader`, kept in the row.
    static let short = "eyJhbGciOiJFUzI1NiJ9"

    static func transaction(_ index: Int, jws: String?) -> NewTransaction {
        var fact = F.notifications(customers: 1, perCustomer: 1, prefix: "jws")[0].transaction
        fact.transactionId = "jws-t\(index)"
        fact.signedDate = F.at(Int64(index))
        return NewTransaction(appId: F.appId, jws: jws, fact: fact, source: "api", receivedAt: F.now)
    }

    /// The app set up and a customer owning the transactions' purchase: its id.
    static func owner(_ store: any Store) async throws -> Int64 {
        try await F.setUp(store)
        let original = transaction(0, jws: nil).fact.originalTransactionId
        return try await store.write { tx in
            let customer = try tx.ensureCustomer(appId: F.appId, appUserId: "jws-user", at: F.now)
            _ = try tx.claimOriginalTransaction(original, customerId: customer.id, at: F.now)
            return customer.id
        }
    }

    /// Every stored transaction's raw text, in the order written.
    static func raws(_ store: any Store, customer: Int64) async throws -> [String?] {
        try await store.read { reader in
            try reader.storedFacts(customerId: customer, kind: .transaction, after: nil, limit: 100).map(\.raw)
        }
    }

    @Test("headers stored once, texts read back exact, rows of both shapes", arguments: Backend.enabled)
    func storedOnceAndReadBack(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            let customer = try await Self.owner(store)
            // One at a time: two rows of chain A, one of chain B, a short header, none.
            let single = [
                Self.jws(header: Self.chainA, seed: 10), Self.jws(header: Self.chainA, seed: 20),
                Self.jws(header: Self.chainB, seed: 30), Self.jws(header: Self.short, seed: 40), nil,
            ]
            try await store.write { tx in
                for (index, jws) in single.enumerated() {
                    let insertion = try tx.insertTransaction(Self.transaction(index, jws: jws))
                    #expect(!insertion.isDuplicate)
                }
                // The same fact again: a duplicate, and nothing more stored.
                let again = try tx.insertTransaction(Self.transaction(0, jws: single[0]))
                #expect(again == .duplicate)
            }
            #expect(try await Self.raws(store, customer: customer) == single)
            let rows = try await store.read { reader in
                try reader.sql("SELECT jws, jws_header_digest FROM signed_transactions ORDER BY id").map {
                    [try $0.optionalText(0), try $0.optionalText(1)]
                }
            }
            let digestA = StoredJWS.digest(of: Self.chainA)
            let digestB = StoredJWS.digest(of: Self.chainB)
            #expect(digestA.count == 64 && digestA != digestB)
            #expect(
                rows == [
                    [String(single[0]!.dropFirst(Self.chainA.count + 1)), digestA],
                    [String(single[1]!.dropFirst(Self.chainA.count + 1)), digestA],
                    [String(single[2]!.dropFirst(Self.chainB.count + 1)), digestB],
                    [single[3], nil],
                    [nil, nil],
                ])
            #expect(try await store.read { try $0.count("jws_headers") } == 2)

            // In bulk: runs of both shapes, a new chain, and a key given twice (the first kept).
            let chainC = Self.text(2_250, seed: 3)
            let bulk = [
                Self.jws(header: Self.chainB, seed: 50), Self.jws(header: Self.short, seed: 60),
                Self.jws(header: chainC, seed: 70), Self.jws(header: Self.chainA, seed: 80),
            ]
            let inserted = try await store.write { tx in
                try tx.insertTransactions(
                    bulk.enumerated().map { Self.transaction(10 + $0.offset, jws: $0.element) }
                        + [Self.transaction(10, jws: Self.jws(header: Self.chainA, seed: 90))])
            }
            #expect(inserted == 4)
            #expect(try await Self.raws(store, customer: customer) == single + bulk)
            // Stored as single inserts store them.
            let bulkRows = try await store.read { reader in
                try reader.sql("SELECT jws, jws_header_digest FROM signed_transactions ORDER BY id").suffix(4).map {
                    [try $0.optionalText(0), try $0.optionalText(1)]
                }
            }
            let expectedBulk: [[String?]] = [
                [String(bulk[0].dropFirst(Self.chainB.count + 1)), digestB], [bulk[1], nil],
                [String(bulk[2].dropFirst(chainC.count + 1)), StoredJWS.digest(of: chainC)],
                [String(bulk[3].dropFirst(Self.chainA.count + 1)), digestA],
            ]
            #expect(Array(bulkRows) == expectedBulk)
            #expect(try await store.read { try $0.count("jws_headers") } == 3)
        }
    }

    @Test("a rolled-back write takes its header away; the next write stores it", arguments: Backend.enabled)
    func rollback(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            let customer = try await Self.owner(store)
            let jws = Self.jws(header: Self.chainA, seed: 10)
            struct Abandon: Error {}
            await #expect(throws: Abandon.self) {
                try await store.write { tx in
                    _ = try tx.insertTransaction(Self.transaction(0, jws: jws))
                    throw Abandon()
                }
            }
            #expect(try await store.read { try $0.count("jws_headers") } == 0)
            // The digest is remembered in memory; the header row must still be written.
            try await store.write { tx in _ = try tx.insertTransaction(Self.transaction(0, jws: jws)) }
            #expect(try await Self.raws(store, customer: customer) == [jws])
            #expect(try await store.read { try $0.count("jws_headers") } == 1)
        }
    }

    @Test("a row whose header is missing is a corrupt store, not a JWS without header", arguments: Backend.enabled)
    func missingHeader(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            let customer = try await Self.owner(store)
            try await store.write { tx in
                _ = try tx.insertTransaction(Self.transaction(0, jws: Self.jws(header: Self.chainA, seed: 10)))
                _ = try tx.sql("DELETE FROM jws_headers")
            }
            await #expect {
                _ = try await Self.raws(store, customer: customer)
            } throws: { error in
                (error as? StoreError)?.code == .corruptValue
            }
        }
    }

    @Test("a V2 notification's header stored once, a V1 body whole", arguments: Backend.enabled)
    func notifications(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            let customer = try await Self.owner(store)
            let original = Self.transaction(0, jws: nil).fact.originalTransactionId
            let v1 = "{\"notification_type\":\"" + String(repeating: "x", count: 300) + "\",\"price\":9.99}"
            let payloads = [
                Self.jws(header: Self.chainA, seed: 100), Self.jws(header: Self.chainA, seed: 110), v1,
                Self.jws(header: Self.short, seed: 120),
            ]
            try await store.write { tx in
                for (index, payload) in payloads.enumerated() {
                    let insertion = try tx.insertNotification(
                        NewNotification(
                            appId: F.appId, notificationUUID: "jws-n\(index)", type: "DID_RENEW", subtype: nil,
                            environment: .production, originalTransactionId: original,
                            signedDate: F.at(Int64(index)), signedPayload: payload, fact: nil, receivedAt: F.now))
                    #expect(!insertion.isDuplicate)
                }
            }
            let (stored, byUUID, rows) = try await store.read { reader in
                (
                    try reader.storedFacts(customerId: customer, kind: .notification, after: nil, limit: 10).map(\.raw),
                    try (0..<payloads.count).map {
                        try reader.notification(appId: F.appId, uuid: "jws-n\($0)")?.signedPayload
                    },
                    try reader.sql("SELECT signed_payload, signed_payload_header_digest FROM notifications ORDER BY id")
                        .map { [try $0.optionalText(0), try $0.optionalText(1)] }
                )
            }
            #expect(stored == payloads)
            #expect(byUUID == payloads)
            let digestA = StoredJWS.digest(of: Self.chainA)
            let expected: [[String?]] = [
                [String(payloads[0].dropFirst(Self.chainA.count + 1)), digestA],
                [String(payloads[1].dropFirst(Self.chainA.count + 1)), digestA], [v1, nil], [payloads[3], nil],
            ]
            #expect(rows == expected)
            #expect(try await store.read { try $0.count("jws_headers") } == 1)
        }
    }

    /// Splitting at the first `.` and joining with one is the identity, for any text; only a
    /// header of 256 bytes or more is stored apart.
    @Test func splitAndJoinAreExact() throws {
        // Only base64url headers: a V1 notification's JSON body is no JWS.
        let long = String(repeating: "é", count: 128)
        let json = "{\"notification_type\":\"" + String(repeating: "x", count: 300) + "\",\"price\":9.99}"
        let cases: [(text: String, apart: Bool)] = [
            ("", false), (".", false), ("..", false), ("a.b", false), (Self.short + ".x.y", false),
            (long + ".rest", false), (long + "." + long + "." + long, false), (json, false),
            (String(Self.chainA.prefix(255)) + ".rest", false), (String(Self.chainA.prefix(256)) + ".rest", true),
            (Self.chainA, false), (Self.chainA + ".", true), (Self.chainA + "..z", true),
        ]
        for (text, apart) in cases {
            let stored = StoredJWS(text)
            #expect(
                try StoredJWS.joined(rest: stored.rest, digest: stored.header?.digest, header: stored.header?.text)
                    == text)
            #expect((stored.header != nil) == apart, "\(text.prefix(20))")
            #expect(stored.header.map { $0.text + "." + stored.rest } ?? stored.rest == text)
        }
    }

    /// A renewal info of the transactions' purchase signed at `signedDate`.
    static func renewalInfo(jws: String?, signedDate: Int64 = 0, autoRenew: Bool = true) -> NewRenewalInfo {
        let original = transaction(0, jws: nil).fact.originalTransactionId
        let fact = RenewalFact(
            originalTransactionId: original, productId: "monthly", autoRenewProductId: "monthly",
            autoRenewEnabled: autoRenew, signedDate: F.at(signedDate), environment: .production)
        return NewRenewalInfo(appId: F.appId, jws: jws, fact: fact, source: "api", receivedAt: F.now)
    }

    @Test("a renewal info's header stored once, its text read back exact (0031)", arguments: Backend.enabled)
    func renewalInfoHeaderStoredOnce(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            let customer = try await Self.owner(store)
            let texts = [
                Self.jws(header: Self.chainA, seed: 100), Self.jws(header: Self.short, seed: 110), nil,
                Self.jws(header: Self.chainB, seed: 120),
            ]
            try await store.write { tx in
                _ = try tx.insertTransaction(Self.transaction(0, jws: Self.jws(header: Self.chainA, seed: 1)))
                _ = try tx.insertRenewalInfo(Self.renewalInfo(jws: texts[0], signedDate: 1))
                _ = try tx.insertRenewalInfos([
                    Self.renewalInfo(jws: texts[1], signedDate: 2), Self.renewalInfo(jws: texts[2], signedDate: 3),
                    Self.renewalInfo(jws: texts[3], signedDate: 4),
                ])
            }
            let raws = try await store.read { reader in
                try reader.storedFacts(customerId: customer, kind: .renewalInfo, after: nil, limit: 10).map(\.raw)
            }
            #expect(raws == texts)
            let rows = try await store.read { reader in
                try reader.sql("SELECT jws, jws_header_digest FROM signed_renewal_infos ORDER BY id").map {
                    [try $0.optionalText(0), try $0.optionalText(1)]
                }
            }
            #expect(
                rows == [
                    [String(texts[0]!.dropFirst(Self.chainA.count + 1)), StoredJWS.digest(of: Self.chainA)],
                    [texts[1], nil], [nil, nil],
                    [String(texts[3]!.dropFirst(Self.chainB.count + 1)), StoredJWS.digest(of: Self.chainB)],
                ])
            // Chain A once for the transaction and the renewal info; chain B once.
            #expect(try await store.read { try $0.count("jws_headers") } == 2)
        }
    }

    @Test(
        "two renewal infos at one instant: the greater whole JWS is kept, header stored apart or not",
        arguments: Backend.enabled)
    func renewalTieComparesWholeText(backend: Backend) async throws {
        // A's whole text is the greater ("z…" > "eyJ…"), its rest the smaller ("A…" < "eyJ…"):
        // comparing what the row holds instead of the whole text would keep B.
        let chainZ = "z" + Self.text(400, seed: 9)
        let a = Self.renewalInfo(jws: chainZ + ".A" + Self.text(500, seed: 10), autoRenew: false)
        let b = Self.renewalInfo(jws: Self.short + "." + Self.text(500, seed: 11), autoRenew: true)
        #expect(a.jws! > b.jws! && String(a.jws!.dropFirst(chainZ.count + 1)) < b.jws!)
        for order in [[a, b], [b, a]] {
            // One at a time, both in one bulk insert, or the second in a bulk insert against the
            // first stored (its multi-row statement compares with a stored, split row).
            for mode in ["single", "bulk", "single then bulk"] {
                try await withStore(backend) { store, _ in
                    let customer = try await Self.owner(store)
                    try await store.write { tx in
                        switch mode {
                        case "single": for renewal in order { _ = try tx.insertRenewalInfo(renewal) }
                        case "bulk": _ = try tx.insertRenewalInfos(order)
                        default:
                            _ = try tx.insertRenewalInfo(order[0])
                            _ = try tx.insertRenewalInfos([order[1]])
                        }
                    }
                    let kept = try await store.read { reader in
                        try reader.storedFacts(customerId: customer, kind: .renewalInfo, after: nil, limit: 10)
                    }
                    #expect(kept.map(\.raw) == [a.jws], "order \(order.map(\.fact.autoRenewEnabled)), \(mode)")
                    #expect(kept.map(\.fact) == [.renewalInfo(a.fact)])
                    // A replay of either changes nothing.
                    let replays = try await store.write { tx in
                        [try tx.insertRenewalInfo(a), try tx.insertRenewalInfo(b)]
                    }
                    #expect(replays == [.duplicate, .duplicate])
                }
            }
        }
    }

    @Test(
        "PostgreSQL: a tie with a row whose new header was committed while the upsert waited compares whole texts",
        .enabled(if: Backend.postgresURL != nil, Backend.postgresSkipMessage))
    func renewalTieAfterAConcurrentNewHeader() async throws {
        // A's header is new and A's whole text the greater; its rest is the smaller, so a
        // comparison without the header would keep B.
        let chainNew = "z" + Self.text(400, seed: 21)
        let a = Self.renewalInfo(jws: chainNew + ".A" + Self.text(500, seed: 22), autoRenew: false)
        let b = Self.renewalInfo(jws: Self.short + "." + Self.text(500, seed: 23), autoRenew: true)
        try await withStore(.postgres) { store, database in
            let customer = try await Self.owner(store)
            // The first writer stores A and its new header and holds its transaction open until
            // the second writer's upsert of B (its snapshot has neither) waits for A's row; the
            // second then compares once the first has committed. States, not delays, order them.
            let hold = TransactionHold()
            let first = Task {
                try await store.write { tx in
                    let insertion = try tx.insertRenewalInfo(a)
                    hold.hold()
                    return insertion
                }
            }
            try await hold.untilHeld()
            let second = Task { try await store.write { tx in try tx.insertRenewalInfo(b) } }
            try await hold.releaseOnceWaiting(database.url, statement: "INSERT INTO signed_renewal_infos")
            #expect(try await first.value != .duplicate)
            #expect(try await second.value == .duplicate)
            let kept = try await store.read { reader in
                try reader.storedFacts(customerId: customer, kind: .renewalInfo, after: nil, limit: 10)
            }
            #expect(kept.map(\.raw) == [a.jws])
        }
    }

    /// Waits (up to 20 s) until `condition` holds; fails the test if it never does.
    static func until(_ condition: () throws -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while try !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("a state the test waits for never came")
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
