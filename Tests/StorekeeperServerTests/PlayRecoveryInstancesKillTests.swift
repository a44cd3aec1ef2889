import AppStoreModels
import AppStoreSimulator
import Foundation
import GooglePlaySimulator
import HTTPServer
import SecretSealing
import StorekeeperIngestion
import StorekeeperServer
import StorekeeperTesting
import Synchronization
import Testing

@testable import Storage

/// Issue 15's counterpart of `RecoveryInstancesKillTests` for the Play recovery workers: a real
/// `storekeeper serve` process and an in-process server share a PostgreSQL database of their
/// own and the Play simulator; every push is lost, so the workers alone find what happened. The
/// process is frozen (SIGSTOP) while it holds leased work it has not finished, then SIGKILLed,
/// and the other server finishes that work once the lease runs out.
///
/// Exactly once: every subscription is re-read (every voided purchase applied) once, with one
/// set of events per customer; the only Google call that may be repeated is the one the killed
/// process had sent but not recorded. The simulator answers each call after a delay, so the
/// process is slow enough to be caught holding unfinished work.
@Suite(.serialized) struct PlayRecoveryInstancesKillTests {
    static let available = RecoveryInstancesKillTests.available
    static let customers = 12
    static let package = "com.example.playkill"
    static let audience = "https://storekeeper.test/play-kill"
    static let productId = "com.example.monthly"

    /// Re-reading with two instances, one SIGKILLed while it holds a claimed batch: every
    /// subscription whose expiry went unheard is re-read, the dead instance's unfinished tokens
    /// by the other once their lease runs out, and Google is asked once per token (twice at
    /// most for the one read in flight at the kill).
    @Test(.enabled(if: available, "needs STOREKEEPER_TEST_POSTGRES_URL and the storekeeper binary"))
    func aKilledInstancesRereadBatchIsRereadByTheOtherOnce() async throws {
        let world = try await PlayKillWorld.make(delayMilliseconds: 300) { configuration in
            configuration.playReread = true
            configuration.playRereadIntervalSeconds = 1
            configuration.playRereadExpiryDelaySeconds = 0
            configuration.playRereadLeaseSeconds = 10
        }
        var serving: ServeProcess?
        var workers: RunningWorkers?
        var failure: (any Error)?
        do {
            let app = try await world.connectApp()
            // Each customer buys a four-second subscription and the app posts it; when the
            // periods are over, Google expires them, and the pushes are lost.
            var tokens: [String: String] = [:]
            for index in 0..<Self.customers {
                let customer = "reread-kill-\(index)"
                tokens[customer] = try await world.buyAndPost(customer, app, periodMillis: 4_000)
            }
            let expiries = await world.play.expiries(Array(tokens.values))
            let lastExpiry = try #require(expiries.max())
            let waited = try await DeliveryInstances.until(30) {
                Timestamp.now.millisecondsSince1970 > lastExpiry + 200
            }
            try #require(waited)
            for token in tokens.values.sorted() { try await world.play.expire(token) }
            let readsBefore = world.calls.subscriptionReads()

            let process = try ServeProcess(
                world.processSettings([
                    "STOREKEEPER_PLAY_REREAD_INTERVAL_SECONDS": "1",
                    "STOREKEEPER_PLAY_REREAD_EXPIRY_DELAY_SECONDS": "0",
                    "STOREKEEPER_PLAY_REREAD_LEASE_SECONDS": "10", "STOREKEEPER_PLAY_VOIDED_POLLING": "false",
                ]))
            serving = process
            let owner = world.harness.application.playRereadWorker.owner
            let reads = { @Sendable () -> [String: Int] in
                world.calls.subscriptionReads().merging(readsBefore.mapValues { -$0 }, uniquingKeysWith: +)
                    .filter { $0.value != 0 }
            }
            let claimed = try await DeliveryInstances.until(60) {
                try world.watch(app.appId).contains { $0.owner != nil && $0.owner != owner }
            }
            try #require(claimed, "the process never claimed a re-read: \(process.output)")
            workers = world.harness.application.startWorkers()
            // Frozen while it holds a live lease on tokens it has not finished, a few reads in.
            var heldByKilled: [PlayKillWorld.Watch] = []
            let holding = try await DeliveryInstances.until(60) {
                let now = Timestamp.now.millisecondsSince1970
                let live = try world.watch(app.appId).contains {
                    $0.owner != nil && $0.owner != owner && ($0.leaseExpiresAt ?? 0) > now + 2_000
                }
                guard reads().values.reduce(0, +) >= 3 && live else { return false }
                process.pause()
                heldByKilled = try world.watch(app.appId).filter {
                    $0.owner != nil && $0.owner != owner
                        && ($0.leaseExpiresAt ?? 0) > Timestamp.now.millisecondsSince1970
                }
                if heldByKilled.isEmpty { process.resume() }
                return !heldByKilled.isEmpty
            }
            try #require(holding, "the process held no batch while re-reads were under way: \(process.output)")
            // A read the process sent just before it froze is counted by the simulator by now.
            try await Task.sleep(for: .milliseconds(500))
            let readsAtKill = reads()
            process.kill()
            #expect(process.process.terminationReason == .uncaughtSignal)

            let finished = try await DeliveryInstances.until(90) {
                let watch = try world.watch(app.appId)
                return watch.count == Self.customers && watch.allSatisfy { $0.rereadAt != nil && $0.owner == nil }
            }
            let left = try world.watch(app.appId).filter { $0.rereadAt == nil || $0.owner != nil }
            #expect(finished, "not re-read: \(left.map(\.token))")
            await workers?.stop()
            workers = nil

            let calls = reads()
            let stored = try world.snapshots(app.appId, source: "reread")
            // Read by the killed process, unrecorded: the only tokens read (and stored) twice.
            let unrecorded = Set(heldByKilled.map(\.token)).filter { readsAtKill[$0] != nil }
            #expect(unrecorded.count <= 1, "more than one read in flight at the kill: \(unrecorded)")
            #expect(Set(calls.keys) == Set(tokens.values))
            for token in tokens.values.sorted() {
                let allowed = unrecorded.contains(token) ? 1...2 : 1...1
                #expect(allowed.contains(calls[token] ?? 0), "\(token) read \(calls[token] ?? 0) times")
                #expect(allowed.contains(stored[token] ?? 0), "\(token) stored \(stored[token] ?? 0) times")
            }
            let watch = try world.watch(app.appId)
            #expect(watch.allSatisfy { $0.state == "SUBSCRIPTION_STATE_EXPIRED" })
            for customer in tokens.keys.sorted() {
                #expect(try await world.eventTypes(app, customer) == ["INITIAL_PURCHASE", "EXPIRATION"], "\(customer)")
                #expect(try await world.isActive(app, customer) == false, "\(customer)")
            }
        } catch {
            failure = error
        }
        serving?.close()
        await workers?.stop()
        await world.stop()
        if let failure { throw failure }
    }

    /// Voided-purchases polling with two instances, one SIGKILLed mid-window (pages of two, so
    /// the window spans six pages): the other resumes the same window from the page token the
    /// dead one saved once the cursor's lease runs out, every voided purchase is applied once
    /// (one `REFUND` per customer) and every page is asked for once (twice at most for the
    /// one in flight at the kill).
    @Test(.enabled(if: available, "needs STOREKEEPER_TEST_POSTGRES_URL and the storekeeper binary"))
    func aKilledInstancesVoidedWindowIsFinishedByTheOtherOnce() async throws {
        let world = try await PlayKillWorld.make(delayMilliseconds: 400) { configuration in
            configuration.playVoidedPolling = true
            configuration.playVoidedPollingPageSize = 2
            configuration.historyReplayLeaseSeconds = 4
        }
        var serving: ServeProcess?
        var failure: (any Error)?
        do {
            let app = try await world.connectApp()
            // Each customer buys and the app posts the purchase; then Google refunds it, and
            // the voided-purchase pushes are lost.
            var tokens: [String: String] = [:]
            for index in 0..<Self.customers {
                let customer = "voided-kill-\(index)"
                tokens[customer] = try await world.buyAndPost(customer, app, periodMillis: 30 * 86_400_000)
            }
            for token in tokens.values.sorted() { try await world.play.voidSubscription(token) }

            let process = try ServeProcess(
                world.processSettings([
                    "STOREKEEPER_PLAY_VOIDED_POLLING_PAGE_SIZE": "2", "STOREKEEPER_HISTORY_REPLAY_LEASE_SECONDS": "4",
                    "STOREKEEPER_PLAY_REREAD": "false",
                ]))
            serving = process
            let worker = world.harness.application.playVoidedPollingWorker
            // Frozen while it holds the cursor's live lease with the window half listed.
            var held: PlayKillWorld.Cursor?
            let holding = try await DeliveryInstances.until(60) {
                let now = Timestamp.now.millisecondsSince1970
                guard let cursor = try world.cursor(app.appId), cursor.owner != nil, cursor.owner != worker.owner,
                    cursor.pageToken != nil, (cursor.leaseExpiresAt ?? 0) > now + 1_000
                else { return false }
                process.pause()
                held = try world.cursor(app.appId)
                let stillOpen =
                    held?.pageToken != nil && (held?.leaseExpiresAt ?? 0) > Timestamp.now.millisecondsSince1970
                if !stillOpen { process.resume() }
                return stillOpen
            }
            try #require(holding, "the process held no open window: \(process.output)")
            let window = try #require(held)
            // A page the process asked for just before it froze is counted by now.
            try await Task.sleep(for: .milliseconds(500))
            let pagesAtKill = world.calls.voidedPages()
            process.kill()
            #expect(process.process.terminationReason == .uncaughtSignal)

            // The other instance's runs: skipped while the dead lease lasts, then the same window
            // from the saved page to its end.
            var last: PlayVoidedPollingRun?
            let completed = try await DeliveryInstances.until(60) {
                let run = await worker.runOnce()[app.appId]
                if run?.leased == true { last = run.map(PlayVoidedPollingRun.init) }
                return run?.leased == true && run?.completed == true
            }
            let run = try #require(last)
            #expect(completed, "the window was not finished: \(run)")
            #expect(run.resumed && run.failure == nil)
            #expect(run.windowStart == window.windowStart && run.windowEnd == window.windowEnd)

            // Every page asked once; the page in flight at the kill at most twice.
            let pages = world.calls.voidedPages()
            let expectedPages = [""] + stride(from: 2, to: Self.customers, by: 2).map { "sim-page-\($0)" }
            #expect(Set(pages.keys) == Set(expectedPages))
            let inFlight = expectedPages.filter { (pagesAtKill[$0] ?? 0) > 0 && $0 == window.pageToken }
            for page in expectedPages {
                let allowed = inFlight.contains(page) ? 1...2 : 1...1
                #expect(allowed.contains(pages[page] ?? 0), "page \(page) asked \(pages[page] ?? 0) times")
            }
            #expect(run.pages == expectedPages.count - expectedPages.firstIndex(of: window.pageToken!)!)

            // Each voided purchase stored once and refunded once.
            let stored = try world.snapshots(app.appId, source: "voided_poll")
            #expect(stored == Dictionary(uniqueKeysWithValues: tokens.values.map { ($0, 1) }))
            for customer in tokens.keys.sorted() {
                #expect(try await world.eventTypes(app, customer) == ["INITIAL_PURCHASE", "REFUND"], "\(customer)")
                #expect(try await world.isActive(app, customer) == false, "\(customer)")
            }
            let cursor = try #require(try world.cursor(app.appId))
            #expect(cursor.cursorAt == window.windowEnd)
            #expect(cursor.owner == nil && cursor.pageToken == nil && cursor.lastError == nil)
        } catch {
            failure = error
        }
        serving?.close()
        await world.stop()
        if let failure { throw failure }
    }
}

/// What the test keeps of one `PlayVoidedPurchasesPolling.Run` (printable on failure).
struct PlayVoidedPollingRun: CustomStringConvertible {
    var resumed: Bool
    var completed: Bool
    var pages: Int
    var failure: String?
    var windowStart: Int64?
    var windowEnd: Int64?

    init(_ run: PlayVoidedPurchasesPolling.Run) {
        (resumed, completed, pages) = (run.resumed, run.completed, run.pages)
        failure = run.failure.map { $0.code.rawValue }
        (windowStart, windowEnd) = (run.windowStart?.millisecondsSince1970, run.windowEnd?.millisecondsSince1970)
    }

    var description: String {
        "resumed \(resumed) completed \(completed) pages \(pages) failure \(failure ?? "none")"
    }
}

/// The Play simulator's Play Developer API calls, counted by what they asked, each answered
/// after a delay: re-reads by purchase token, voided-purchase pages by page token (`""`: the
/// first page).
/// - Note: Thread-safe: the counts sit behind a `Mutex`.
final class PlayAPICalls: Sendable {
    private let counts = Mutex<(reads: [String: Int], pages: [String: Int])>(([:], [:]))
    let delay: Duration

    init(delay: Duration) { self.delay = delay }

    func subscriptionReads() -> [String: Int] { counts.withLock { $0.reads } }
    func voidedPages() -> [String: Int] { counts.withLock { $0.pages } }

    var middleware: MiddlewareFunction {
        MiddlewareFunction { [self] request, context, next in
            if request.method == .get, request.path.contains("/subscriptionsv2/tokens/") {
                let token = String(request.path.split(separator: "/").last ?? "")
                counts.withLock { $0.reads[token, default: 0] += 1 }
                try await Task.sleep(for: delay)
            } else if request.method == .get, request.path.hasSuffix("/voidedpurchases") {
                let page = request.queryValue("token") ?? ""
                counts.withLock { $0.pages[page, default: 0] += 1 }
                try await Task.sleep(for: delay)
            }
            return try await next(request, context)
        }
    }
}

/// One Play kill test's world: its own PostgreSQL database, the Play simulator on the wall
/// clock with its pushes lost (no push URL), served slowly, and the in-process server.
struct PlayKillWorld: Sendable {
    let database: OwnDatabase
    let play: PlaySimulator
    let playServer: HTTPServer
    let calls: PlayAPICalls
    let secretsKey: SecretsKey
    let harness: ServerHarness

    /// `configure` turns on the worker under test in the in-process server (every worker is
    /// off otherwise but the job queue and webhooks).
    static func make(delayMilliseconds: Int, configure: @escaping (inout ServerConfiguration) -> Void) async throws
        -> PlayKillWorld
    {
        let database = try await OwnDatabase.make(.postgres)
        let play = try PlaySimulator(
            packageNames: [PlayRecoveryInstancesKillTests.package], clock: RealTimeClock(),
            push: .init(url: nil, audience: PlayRecoveryInstancesKillTests.audience))
        let calls = PlayAPICalls(delay: .milliseconds(delayMilliseconds))
        var router = Router()
        router.use(calls.middleware)
        PlaySimulatorRoutes.add(play, to: &router)
        let playServer = try HTTPServer(
            configuration: HTTPServer.Configuration(host: "127.0.0.1", port: 0, threadPoolSize: 4),
            responder: router.buildResponder())
        let secretsKey = try SecretsKey.generate()
        let base = playServer.baseURL.absoluteString
        let harness = try await ServerHarness(
            database: .postgres(database.url), secrets: StoredSecrets(sealer: SecretSealer(key: secretsKey)),
            configure: { configuration in
                configuration.playApiBaseURL = base
                configuration.playPushKeySet = base + "/oauth2/v3/certs"
                configuration.accessScheduler = false
                configuration.historyReplay = false
                configuration.statusPolling = false
                configuration.playReread = false
                configuration.playVoidedPolling = false
                configuration.webhookPollMilliseconds = 50
                configure(&configuration)
            }, serverClock: .system)
        return PlayKillWorld(
            database: database, play: play, playServer: playServer, calls: calls, secretsKey: secretsKey,
            harness: harness)
    }

    /// The `storekeeper serve` process's settings: this world's database, secrets key and
    /// simulator, the App Store workers and the access scheduler off, then `extra`.
    func processSettings(_ extra: [String: String]) -> [String: String] {
        let base = playServer.baseURL.absoluteString
        var settings = [
            "STOREKEEPER_DATABASE_URL": database.url, "STOREKEEPER_LISTEN": "127.0.0.1:0",
            "STOREKEEPER_SECRETS_KEY": secretsKey.base64, "STOREKEEPER_ACCESS_LOG": "false",
            "STOREKEEPER_PLAY_API_BASE_URL": base, "STOREKEEPER_PLAY_PUSH_KEY_SET": base + "/oauth2/v3/certs",
            "STOREKEEPER_ACCESS_SCHEDULER": "false", "STOREKEEPER_HISTORY_REPLAY": "false",
            "STOREKEEPER_STATUS_POLLING": "false", "STOREKEEPER_WEBHOOK_POLL_MILLISECONDS": "50",
        ]
        settings.merge(extra) { $1 }
        return settings
    }

    /// The harness's app (the monthly product unlocking `pro`) with a Play side: a service
    /// account the simulator issued, the push audience and service account.
    func connectApp() async throws -> ServerHarness.AppKeys {
        let app = try await harness.createApp()
        let account = try await play.createServiceAccount(
            email: "storekeeper@kill.iam.gserviceaccount.com",
            tokenURI: playServer.baseURL.appendingPathComponent("token"))
        let configured = try await harness.request(
            "PUT", "/v1/admin/apps/\(app.appId)/googleplay", key: ServerHarness.adminKey,
            json: [
                "packageName": PlayRecoveryInstancesKillTests.package,
                "serviceAccountKey": String(decoding: account.json, as: UTF8.self),
                "rtdnAudience": PlayRecoveryInstancesKillTests.audience,
                "pushServiceAccountEmail": await play.push.serviceAccountEmail,
            ])
        try #require(configured.status == 200, "\(configured.text)")
        return app
    }

    /// A new customer buys the monthly product on Play and the app posts the purchase token;
    /// returns the token.
    func buyAndPost(_ customer: String, _ app: ServerHarness.AppKeys, periodMillis: Int64) async throws -> String {
        let token = try await play.purchaseSubscription(
            packageName: PlayRecoveryInstancesKillTests.package, productId: PlayRecoveryInstancesKillTests.productId,
            periodMillis: periodMillis)
        let posted = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/customers/\(customer)/purchases/googleplay", key: app.publicKey,
            json: [
                "packageName": PlayRecoveryInstancesKillTests.package,
                "productId": PlayRecoveryInstancesKillTests.productId, "purchaseToken": token, "type": "subscription",
            ])
        #expect(posted.status == 200, "\(posted.text)")
        return token
    }

    /// The customer's event types, oldest first.
    func eventTypes(_ app: ServerHarness.AppKeys, _ customer: String) async throws -> [String] {
        let answer = try await harness.request(
            "GET", "/v1/apps/\(app.appId)/customers/\(customer)/events?limit=500", key: app.secretKey)
        return (answer.json["events"] as? [[String: Any]] ?? []).compactMap {
            ($0["event"] as? [String: Any])?["type"] as? String
        }
    }

    /// Whether the customer's `pro` entitlement is active.
    func isActive(_ app: ServerHarness.AppKeys, _ customer: String) async throws -> Bool? {
        let answer = try await harness.request(
            "GET", "/v1/apps/\(app.appId)/customers/\(customer)", key: app.publicKey)
        return ((answer.json["entitlements"] as? [String: Any])?["pro"] as? [String: Any])?["isActive"] as? Bool
    }

    /// One `play_subscription_watch` row.
    struct Watch: Sendable {
        var token: String
        var state: String
        var owner: String?
        var leaseExpiresAt: Int64?
        var rereadAt: Int64?
    }

    func watch(_ appId: String) throws -> [Watch] {
        try OwnDatabase.query(
            database.url,
            """
            SELECT purchase_token, state, lease_owner, lease_expires_at, last_reread_at FROM play_subscription_watch
            WHERE app_id = $1 ORDER BY purchase_token
            """, [.text(appId)]
        ).map { row in
            Watch(
                token: try row.text(0), state: try row.text(1), owner: try row.optionalText(2),
                leaseExpiresAt: try row.optionalInteger(3), rereadAt: try row.optionalInteger(4))
        }
    }

    /// The app's `play_voided_cursors` row.
    struct Cursor: Sendable {
        var cursorAt: Int64?
        var owner: String?
        var leaseExpiresAt: Int64?
        var windowStart: Int64?
        var windowEnd: Int64?
        var pageToken: String?
        var lastError: String?
    }

    func cursor(_ appId: String) throws -> Cursor? {
        try OwnDatabase.query(
            database.url,
            """
            SELECT cursor_at, lease_owner, lease_expires_at, window_start, window_end, page_token, last_error
            FROM play_voided_cursors WHERE app_id = $1
            """, [.text(appId)]
        ).first.map { row in
            Cursor(
                cursorAt: try row.optionalInteger(0), owner: try row.optionalText(1),
                leaseExpiresAt: try row.optionalInteger(2), windowStart: try row.optionalInteger(3),
                windowEnd: try row.optionalInteger(4), pageToken: try row.optionalText(5),
                lastError: try row.optionalText(6))
        }
    }

    /// Stored Play reads of `source`, counted by purchase token.
    func snapshots(_ appId: String, source: String) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for row in try OwnDatabase.query(
            database.url, "SELECT purchase_token FROM play_snapshots WHERE app_id = $1 AND source = $2",
            [.text(appId), .text(source)])
        {
            counts[try row.text(0), default: 0] += 1
        }
        return counts
    }

    func stop() async {
        await harness.stop()
        await playServer.stop()
        database.drop()
    }
}

extension PlaySimulator {
    /// The expiry of each subscription token, as the simulator holds it.
    func expiries(_ tokens: [String]) -> [Int64] {
        tokens.compactMap { subscription($0)?.expiryMillis }
    }
}
