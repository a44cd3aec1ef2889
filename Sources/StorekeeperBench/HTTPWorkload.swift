import AppStoreModels
import AppStoreTrust
import Entitlements
import Foundation
import Storage
import StorekeeperIngestion
import Synchronization

/// The data of `scripts/bench-ingestion.sh`: a store seeded with many customers and a file of
/// distinct signed App Store notifications for them, so wrk drives a realistic workload.
///
/// `StorekeeperBench prepare-http --database URL --customers N --notifications M --out DIR
/// [--seed-only]` writes into the store (migrating it) the app `bench` (Sandbox, trusting a
/// test CA generated here), its catalog (`bench.monthly` unlocks `pro`), a public and a
/// secret key, and N customers `user-0` … each with one purchased monthly subscription (its
/// transaction, renewal info and `SUBSCRIBED` notification, as a production store holds it),
/// committed through `IngestionWriter` with `.claim` ownership, in chunks (no HTTP), the
/// planner's statistics refreshed after each, as autovacuum does in production. Then, in
/// DIR: `ca/` (the test CA), `keys.env` (`APP_ID`, `PUBLIC_KEY`, `SECRET_KEY`),
/// `customers.txt` (one app user id a line) and `notifications.jsonl` (M request bodies
/// `{"signedPayload": …}`, one a line): `DID_RENEW` notifications spread uniformly over the
/// customers in a shuffled order, each with its own notificationUUID, a new signed renewal
/// transaction and a signed renewal info. With `--seed-only` the CA and keys are read from
/// DIR and only the store is seeded (the same customers and original transactions, so one
/// notification file serves a second database).
///
/// `StorekeeperBench raw-commits --sqlite DIR | --postgres URL` prints the engine's raw
/// durable single-row commits per second (`RawCommitReference`).
/// - Note: Runs once per process; the signing fans out over the cores, nothing else is shared.
enum HTTPWorkload {
    struct UsageError: Error, CustomStringConvertible {
        var description: String
    }

    static let appId = "bench"
    static let bundleId = "com.example.bench"
    static let productId = "bench.monthly"
    static let day: Int64 = 86_400_000
    static let period: Int64 = 30 * day

    /// Runs `command`; returns the exit status (2 for a usage error, 1 for a failure).
    static func run(command: String, arguments: [String]) async -> Int32 {
        do {
            return try await execute(command: command, arguments: arguments)
        } catch let error as UsageError {
            FileHandle.standardError.write(Data("StorekeeperBench: \(error)\n".utf8))
            return 2
        } catch {
            FileHandle.standardError.write(Data("StorekeeperBench \(command): \(error)\n".utf8))
            return 1
        }
    }

    static func execute(command: String, arguments: [String]) async throws -> Int32 {
        var options: [String: String] = [:]
        var flags: Set<String> = []
        var rest = arguments[...]
        while let name = rest.popFirst() {
            guard name.hasPrefix("--") else { throw UsageError(description: "unexpected argument \(name)") }
            if name == "--seed-only" {
                flags.insert(name)
            } else if let value = rest.popFirst() {
                options[name] = value
            } else {
                throw UsageError(description: "\(name) needs a value")
            }
        }
        switch command {
        case "prepare-http":
            guard let database = options["--database"], let out = options["--out"],
                let customers = Int(options["--customers"] ?? ""), customers > 0,
                let notifications = Int(options["--notifications"] ?? "0"), notifications >= 0
            else {
                throw UsageError(
                    description:
                        "usage: prepare-http --database URL --customers N --notifications M --out DIR [--seed-only]")
            }
            try await prepare(
                database: database, customers: customers, notifications: notifications,
                out: URL(fileURLWithPath: out), seedOnly: flags.contains("--seed-only"))
            return 0
        case "raw-commits":
            let seconds = Double(options["--seconds"] ?? "") ?? 3
            let rate: Double
            if let directory = options["--sqlite"] {
                rate = try RawCommitReference.sqlite(directory: URL(fileURLWithPath: directory), seconds: seconds)
            } else if let url = options["--postgres"] {
                rate = try RawCommitReference.postgres(url: url, seconds: seconds)
            } else {
                throw UsageError(description: "usage: raw-commits --sqlite DIR | --postgres URL [--seconds S]")
            }
            print(String(format: "%.0f", rate))
            return 0
        default:
            throw UsageError(description: "unknown command \(command) (prepare-http, raw-commits)")
        }
    }

    /// The original transaction of customer `index`: the same in every store seeded alike.
    static func originalTransactionId(_ index: Int) -> String { String(5_000_000_000 + index) }

    static func prepare(database: String, customers: Int, notifications: Int, out: URL, seedOnly: Bool) async throws {
        let started = DispatchTime.now().uptimeNanoseconds
        let now = Timestamp(millisecondsSince1970: Int64(Date().timeIntervalSince1970 * 1000))
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let caDirectory = out.appendingPathComponent("ca")
        let authority: TestCertificateAuthority
        let keys: [String: String]
        if seedOnly {
            authority = try TestCertificateAuthority.read(from: caDirectory)
            keys = try readKeys(out.appendingPathComponent("keys.env"))
        } else {
            authority = try TestCertificateAuthority.generate(
                name: "Storekeeper Bench", validFrom: now.adding(milliseconds: -day),
                validUntil: now.adding(milliseconds: 3_650 * day))
            try authority.write(to: caDirectory)
            keys = ["PUBLIC_KEY": newKey(prefix: "sk_pub_"), "SECRET_KEY": newKey(prefix: "sk_sec_")]
            let text = "APP_ID=\(appId)\nPUBLIC_KEY=\(keys["PUBLIC_KEY"]!)\nSECRET_KEY=\(keys["SECRET_KEY"]!)\n"
            try text.write(to: out.appendingPathComponent("keys.env"), atomically: true, encoding: .utf8)
            let ids = (0..<customers).map { "user-\($0)\n" }.joined()
            try ids.write(to: out.appendingPathComponent("customers.txt"), atomically: true, encoding: .utf8)
        }
        // Renewal r of a customer starts at firstPurchase + (r + 1) periods; the last round
        // began 5 days ago, so customers whose renewals arrive are active after the POST run.
        let rounds = Int64((notifications + customers - 1) / customers)
        let firstPurchase = now.adding(milliseconds: -rounds * period - 5 * day)
        let signer = FastSigner(authority)

        let store = try await StoreLocation(database).open()
        // Signed before every notification's signed date (below): a renewal info is unique on
        // its original transaction and signed date.
        let seeded = try await seed(
            store: store, authority: authority, keys: keys, customers: customers, firstPurchase: firstPurchase,
            signedDate: now.adding(milliseconds: -120_000 - Int64(notifications)))
        await store.close()
        print("prepare-http: \(seeded) customers seeded in \(elapsed(since: started))")
        guard !seedOnly else { return }

        // Each notification's signed dates are distinct (a renewal info is unique on its
        // original transaction and signed date) and all before now.
        let signedBase = now.adding(milliseconds: -60_000 - Int64(notifications))
        let order = shuffledCustomers(customers)
        let handle = try createFile(out.appendingPathComponent("notifications.jsonl"))
        defer { try? handle.close() }
        let block = 4_096
        for blockStart in stride(from: 0, to: notifications, by: block) {
            let count = min(block, notifications - blockStart)
            let slices = 16
            let parts = Mutex([[String]](repeating: [], count: slices))
            let failure = Mutex<(any Error)?>(nil)
            DispatchQueue.concurrentPerform(iterations: slices) { slice in
                var bodies: [String] = []
                var index = blockStart + slice
                while index < blockStart + count {
                    do {
                        let customer = order[index % customers]
                        let body = try notification(
                            index: index, customer: customer, round: Int64(index / customers), signer: signer,
                            firstPurchase: firstPurchase, signedDate: signedBase.adding(milliseconds: Int64(index)))
                        bodies.append(body)
                    } catch {
                        failure.withLock { $0 = error }
                    }
                    index += slices
                }
                parts.withLock { $0[slice] = bodies }
            }
            if let error = failure.withLock({ $0 }) { throw error }
            // Lines in index order within the block: slice s holds indices ≡ s (mod slices).
            let lines = parts.withLock { $0 }
            var bytes: [UInt8] = []
            for offset in 0..<count {
                bytes += lines[offset % slices][offset / slices].utf8
                bytes.append(UInt8(ascii: "\n"))
            }
            try handle.write(contentsOf: bytes)
        }
        print("prepare-http: \(notifications) notifications written in \(elapsed(since: started))")
    }

    /// The app, its catalog and keys, and one purchase per customer, committed in chunks.
    static func seed(
        store: any Store, authority: TestCertificateAuthority, keys: [String: String], customers: Int,
        firstPurchase: Timestamp, signedDate: Timestamp
    ) async throws -> Int {
        let now = signedDate
        let settings = AppSettings(rootCertificatesPEM: [authority.root.pem])
        let app = AppRecord(id: appId, bundleId: bundleId, environments: [.sandbox], settings: settings.jsonValue)
        let catalog = ProductCatalog(products: [
            CatalogProduct(
                productId: productId, kind: .autoRenewable, subscriptionGroup: "group", groupLevel: 1,
                duration: SubscriptionPeriod(value: 1, unit: .month), entitlementIds: ["pro"])
        ])
        let records = [("PUBLIC_KEY", APIKeyRecord.Kind.public), ("SECRET_KEY", .secret)].map { name, kind in
            // The server's rule (`APIKeys.hash`): only the SHA-256 of a key is stored.
            APIKeyRecord(
                id: "key_bench_\(kind.rawValue)", appId: appId, kind: kind,
                hash: Digest.hex(Digest.sha256(Array(keys[name, default: ""].utf8))), label: "bench", createdAt: now)
        }
        try await store.write { transaction in
            try transaction.saveApp(app, at: now)
            try transaction.saveCatalog(appId: appId, catalog, at: now)
            for record in records { try transaction.saveAPIKey(record) }
        }
        // Large groups: the seeding is a bulk load. PostgreSQL commits a few groups at once.
        let writer = IngestionWriter(
            store: store,
            settings: IngestionWriter.Settings(
                maximumGroupSize: 500, concurrentGroups: store.engine == .postgres ? 4 : 1))
        let signer = FastSigner(authority)
        let chunk = 2_000
        for chunkStart in stride(from: 0, to: customers, by: chunk) {
            let count = min(chunk, customers - chunkStart)
            let batches = Mutex([FactBatch?](repeating: nil, count: count))
            let failure = Mutex<(any Error)?>(nil)
            DispatchQueue.concurrentPerform(iterations: count) { offset in
                do {
                    let index = chunkStart + offset
                    // As a production store holds a purchase: its transaction, renewal info
                    // and SUBSCRIBED notification (the fact tables hold rows when the run
                    // starts, as they would in production).
                    var purchase = transaction(
                        id: originalTransactionId(index), originalId: originalTransactionId(index),
                        purchase: firstPurchase, signedDate: signedDate)
                    purchase.transactionReason = RawEnum(.purchase)
                    let signed = try signedNotification(
                        type: .subscribed, subtype: .initialBuy, transaction: purchase, signer: signer,
                        signedDate: signedDate)
                    let facts = try Fact.facts(
                        notification: signed.payload, transaction: purchase, renewalInfo: signed.renewalInfo)
                    // What the server stores for this notification, claimed by the customer.
                    var batch = NotificationIngestor.batch(
                        appId: appId, signedPayload: signed.jws, payload: signed.payload,
                        uuid: signed.payload.notificationUUID ?? "", signedDate: signedDate, facts: facts,
                        transactionJWS: signed.transactionJWS, renewalInfoJWS: signed.renewalInfoJWS,
                        environment: .sandbox, receivedAt: now)
                    batch.ownership = .claim(appUserId: "user-\(index)", policy: .transferToNewest)
                    batches.withLock { $0[offset] = batch }
                } catch {
                    failure.withLock { $0 = error }
                }
            }
            if let error = failure.withLock({ $0 }) { throw error }
            let results = await writer.commit(batches.withLock { $0 }.compactMap { $0 }, operation: "bench_seed")
            for result in results { _ = try result.get() }
            // What autovacuum does in production, as the tables grow (PostgreSQL): the next
            // chunk's statements are planned from statistics that know these rows (planned from
            // the empty tables, seeding 10,000 customers took 90 s instead of 45).
            try await store.write { try $0.refreshPlannerStatistics() }
        }
        return customers
    }

    /// Notification `index`: the `round`-th renewal of `customer`'s subscription.
    static func notification(
        index: Int, customer: Int, round: Int64, signer: FastSigner, firstPurchase: Timestamp, signedDate: Timestamp
    ) throws -> String {
        let original = originalTransactionId(customer)
        var renewed = transaction(
            id: String(7_000_000_000 + index), originalId: original,
            purchase: firstPurchase.adding(milliseconds: (round + 1) * period), signedDate: signedDate)
        renewed.originalPurchaseDate = firstPurchase
        renewed.transactionReason = RawEnum(.renewal)
        let signed = try signedNotification(
            type: .didRenew, subtype: nil, transaction: renewed, signer: signer, signedDate: signedDate)
        // A JWS is base64url and dots: nothing in it needs JSON escaping.
        return "{\"signedPayload\":\"\(signed.jws)\"}"
    }

    /// A signed V2 notification about `transaction`, with a renewal info that renews it.
    struct SignedNotification {
        var payload: ResponseBodyV2DecodedPayload
        var renewalInfo: JWSRenewalInfoDecodedPayload
        var jws: String
        var transactionJWS: String
        var renewalInfoJWS: String
    }

    static func signedNotification(
        type: NotificationTypeV2, subtype: Subtype?, transaction: JWSTransactionDecodedPayload, signer: FastSigner,
        signedDate: Timestamp
    ) throws -> SignedNotification {
        var renewal = JWSRenewalInfoDecodedPayload()
        renewal.originalTransactionId = transaction.originalTransactionId
        renewal.productId = productId
        renewal.autoRenewProductId = productId
        renewal.autoRenewStatus = RawEnum(.on)
        renewal.signedDate = signedDate
        renewal.environment = RawEnum(.sandbox)
        var data = NotificationData()
        data.environment = RawEnum(.sandbox)
        data.bundleId = bundleId
        let transactionJWS = try signer.sign(transaction)
        let renewalInfoJWS = try signer.sign(renewal)
        data.signedTransactionInfo = transactionJWS
        data.signedRenewalInfo = renewalInfoJWS
        var payload = ResponseBodyV2DecodedPayload()
        payload.notificationType = RawEnum(type)
        payload.subtype = subtype.map { RawEnum($0) }
        payload.notificationUUID = UUID().uuidString.lowercased()
        payload.version = "2.0"
        payload.signedDate = signedDate
        payload.data = data
        return SignedNotification(
            payload: payload, renewalInfo: renewal, jws: try signer.sign(payload), transactionJWS: transactionJWS,
            renewalInfoJWS: renewalInfoJWS)
    }

    /// A monthly subscription transaction purchased at `purchase`.
    static func transaction(id: String, originalId: String, purchase: Timestamp, signedDate: Timestamp)
        -> JWSTransactionDecodedPayload
    {
        var payload = JWSTransactionDecodedPayload()
        payload.transactionId = id
        payload.originalTransactionId = originalId
        payload.webOrderLineItemId = "w\(id)"
        payload.bundleId = bundleId
        payload.productId = productId
        payload.subscriptionGroupIdentifier = "group"
        payload.type = RawEnum(.autoRenewableSubscription)
        payload.environment = RawEnum(.sandbox)
        payload.inAppOwnershipType = RawEnum(.purchased)
        payload.quantity = 1
        payload.purchaseDate = purchase
        payload.originalPurchaseDate = purchase
        payload.expiresDate = purchase.adding(milliseconds: period)
        payload.signedDate = signedDate
        payload.storefront = "USA"
        payload.storefrontId = "143441"
        payload.price = 9990
        payload.currency = "USD"
        return payload
    }

    /// 0..<count in a random order: consecutive notifications go to unrelated customers.
    static func shuffledCustomers(_ count: Int) -> [Int] { Array(0..<count).shuffled() }

    static func newKey(prefix: String) -> String {
        var generator = SystemRandomNumberGenerator()
        return prefix + Base64URL.encode((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    static func readKeys(_ url: URL) throws -> [String: String] {
        var keys: [String: String] = [:]
        for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { keys[String(parts[0])] = String(parts[1]) }
        }
        return keys
    }

    static func createFile(_ url: URL) throws -> FileHandle {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw UsageError(description: "cannot create \(url.path)")
        }
        return try FileHandle(forWritingTo: url)
    }

    static func elapsed(since start: UInt64) -> String {
        String(format: "%.1f s", Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
}

/// `JWSSigner`'s tokens (the same header: `alg`, `typ`, `x5c` of the test chain; the payload as
/// sorted-key JSON) made faster for hundreds of thousands of payloads: the header is encoded
/// once and base64url is a table lookup instead of Foundation string replacements, which
/// dominated the preparation's time.
/// - Note: Immutable; `Sendable` (the key is thread-safe to sign with).
struct FastSigner: Sendable {
    let key: PrivateKey
    let encodedHeader: String

    init(_ authority: TestCertificateAuthority) {
        key = authority.leafKey
        let chain = [authority.leaf, authority.intermediate, authority.root]
            .map { "\"\(Data($0.der).base64EncodedString())\"" }.joined(separator: ",")
        encodedHeader = Self.base64URL(Array("{\"alg\":\"ES256\",\"typ\":\"JWT\",\"x5c\":[\(chain)]}".utf8))
    }

    func sign<T: Encodable>(_ payload: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let input = encodedHeader + "." + Self.base64URL(Array(try encoder.encode(payload)))
        return input + "." + Self.base64URL(try key.signES256(Array(input.utf8)))
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Base64url without padding (RFC 7515 §2).
    static func base64URL(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= bytes.count {
            let value = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            output.append(alphabet[Int(value >> 18 & 63)])
            output.append(alphabet[Int(value >> 12 & 63)])
            output.append(alphabet[Int(value >> 6 & 63)])
            output.append(alphabet[Int(value & 63)])
            index += 3
        }
        let remaining = bytes.count - index
        if remaining > 0 {
            var value = UInt32(bytes[index]) << 16
            if remaining == 2 { value |= UInt32(bytes[index + 1]) << 8 }
            output.append(alphabet[Int(value >> 18 & 63)])
            output.append(alphabet[Int(value >> 12 & 63)])
            if remaining == 2 { output.append(alphabet[Int(value >> 6 & 63)]) }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
