import AppStoreClient
import AppStoreModels
import AppStoreTrust
import Foundation
import Storage
import StorekeeperIngestion
import StorekeeperServer
import StorekeeperTesting
import Testing

/// The recovery workers over a fake App Store: the history replay cursor (advanced only after a
/// page commits, the look-back clamp, `onlyFailures`, leases), status polling of a subscription
/// whose renewal notification was lost, the per-app switch, the metrics, and on-demand sync.
@Suite(.serialized) struct RecoveryWorkerTests {
    static let day: Int64 = 86_400_000

    /// A harness with an app that has an App Store Connect key (so the workers run for it).
    static func setUp(_ fake: FakeAppStore, recovery: [String: Any]? = nil) async throws -> (
        ServerHarness, ServerHarness.AppKeys
    ) {
        let harness = try await ServerHarness(connections: { _, _, _ in fake })
        var settings: [String: Any] = [
            "appStoreConnect": [
                "keyId": "KEY0000001", "issuerId": "00000000-0000-4000-8000-000000000001",
                "privateKeyPEM": try PrivateKey.generateP256().pkcs8PEM,
            ]
        ]
        if let recovery { settings["recovery"] = recovery }
        return (harness, try await harness.createApp(settings: settings))
    }

    /// A SUBSCRIBED notification for `original`, its transaction expiring after 30 days.
    static func subscribed(_ signer: AppStoreSigner, original: String, at t0: Timestamp) throws -> String {
        try signer.notification(
            .subscribed, .initialBuy,
            transaction: try signer.transaction(
                id: original, originalId: original, purchase: t0, expires: t0.plus(days: 30), signed: t0),
            renewal: try signer.renewal(originalId: original, signed: t0), signed: t0)
    }

    static func cursor(_ harness: ServerHarness, _ appId: String) async throws -> HistoryCursor? {
        try await harness.store.read { try $0.historyCursor(appId: appId, environment: .sandbox) }
    }

    @Test func replayMovesTheCursorPageByPageAndARerunCoversAFailedPage() async throws {
        let fake = FakeAppStore()
        let (harness, app) = try await Self.setUp(fake)
        defer { Task { await harness.stop() } }
        let signer = AppStoreSigner(ca: harness.ca)
        let t0 = TestSigning.signedDate
        let (a, b, c) = (uniqueDigits(), uniqueDigits(), uniqueDigits())
        let pages = [
            [
                try Self.subscribed(signer, original: a, at: t0),
                try Self.subscribed(signer, original: b, at: t0.plus(days: 1)),
            ],
            [try Self.subscribed(signer, original: c, at: t0.plus(days: 2))],
        ]
        fake.answers.withLock {
            $0.notificationPages = pages
            $0.failingPage = 1
        }
        let now = t0.plus(days: 3)
        harness.clock.set(now)
        let worker = harness.application.historyReplayWorker
        let failed = await worker.runOnce()
        #expect(failed.failures["\(app.appId)/Sandbox"]?.code == .appStoreUnavailable)
        // The first page is committed: the cursor is at its newest notification, not at `now`.
        let afterFailure = try #require(try await Self.cursor(harness, app.appId))
        #expect(afterFailure.cursorAt == t0.plus(days: 1))
        #expect(afterFailure.leaseOwner == nil && afterFailure.lastError?.hasPrefix("app_store_unavailable") == true)
        #expect(try await harness.store.read { try $0.notificationCount(appId: app.appId) } == 2)

        fake.answers.withLock { $0.failingPage = nil }
        harness.clock.set(now.plus(days: 1))
        let pass = await worker.runOnce()
        let run = try #require(pass.runs["\(app.appId)/Sandbox"])
        #expect(run.completed && run.pages == 2 && run.replayed == 3 && run.newNotifications == 1)
        // The rerun starts one overlap (an hour) before the cursor and ends now.
        let requests = fake.historyRequests.withLock { $0 }
        #expect(requests.last?.startDate == t0.plus(days: 1).adding(milliseconds: -3_600_000))
        #expect(requests.last?.endDate == now.plus(days: 1))
        #expect(requests.last?.onlyFailures == nil)
        #expect(try await Self.cursor(harness, app.appId)?.cursorAt == now.plus(days: 1))
        #expect(try await harness.store.read { try $0.notificationCount(appId: app.appId) } == 3)
        let metrics = harness.application.metrics.render()
        #expect(metrics.contains("storekeeper_history_replayed_total{app=\"\(app.appId)\",environment=\"Sandbox\"} 5"))
        #expect(
            metrics.contains(
                "storekeeper_history_new_notifications_total{app=\"\(app.appId)\",environment=\"Sandbox\"} 3"))
        #expect(
            metrics.contains("storekeeper_history_cursor_age_seconds{app=\"\(app.appId)\",environment=\"Sandbox\"} 0"))
    }

    /// After a downtime, a replayed notification changes access as it would have on time: a
    /// cancellation replayed after the expiry still gives CANCELLATION, then EXPIRATION.
    @Test func aReplayedNotificationIsEvaluatedAsOfItsSignedDate() async throws {
        let fake = FakeAppStore()
        let (harness, app) = try await Self.setUp(fake)
        defer { Task { await harness.stop() } }
        let signer = AppStoreSigner(ca: harness.ca)
        let t0 = TestSigning.signedDate
        let original = uniqueDigits()
        let transaction = try signer.transaction(
            id: original, originalId: original, purchase: t0, expires: t0.plus(days: 30), signed: t0)
        #expect(
            try await harness.request(
                "POST", "/v1/apps/\(app.appId)/customers/frank/transactions", key: app.publicKey,
                json: ["signedTransaction": transaction]
            ).status == 200)
        let cancelled = try signer.notification(
            .didChangeRenewalStatus, .autoRenewDisabled, transaction: transaction,
            renewal: try signer.renewal(originalId: original, signed: t0.plus(days: 3), autoRenew: false),
            signed: t0.plus(days: 3))
        fake.answers.withLock { $0.notificationPages = [[cancelled]] }
        harness.clock.set(t0.plus(days: 31))
        #expect(await harness.application.historyReplayWorker.runOnce().runs["\(app.appId)/Sandbox"]?.replayed == 1)
        await harness.application.accessScheduler.commitDue()
        let page = try await harness.request(
            "GET", "/v1/apps/\(app.appId)/customers/frank/events", key: app.secretKey)
        let types = (page.json["events"] as? [[String: Any]] ?? []).compactMap {
            ($0["event"] as? [String: Any])?["type"] as? String
        }
        #expect(types == ["INITIAL_PURCHASE", "CANCELLATION", "EXPIRATION"])
    }

    @Test func firstRunIsClampedToAppleLookBackAndOnlyFailuresIsAsked() async throws {
        let t0 = TestSigning.signedDate
        // Production: 180 days minus the one-day margin; Sandbox: 30 minus one.
        let settings = NotificationHistoryReplay.Settings()
        #expect(
            NotificationHistoryReplay.window(cursor: nil, now: t0, environment: .production, settings: settings).start
                == t0.adding(milliseconds: -179 * Self.day))
        #expect(
            NotificationHistoryReplay.window(cursor: nil, now: t0, environment: .sandbox, settings: settings).start
                == t0.adding(milliseconds: -29 * Self.day))
        // A cursor older than the look-back (a long downtime) is clamped too, never refused by Apple.
        #expect(
            NotificationHistoryReplay.window(
                cursor: t0.adding(milliseconds: -200 * Self.day), now: t0, environment: .production, settings: settings
            ).start == t0.adding(milliseconds: -179 * Self.day))

        let fake = FakeAppStore()
        let (harness, app) = try await Self.setUp(fake)
        defer { Task { await harness.stop() } }
        let runtime = try await harness.application.ingestion.apps.runtime(appId: app.appId)
        _ = try await harness.application.ingestion.recovery.history.replay(
            app: runtime, environment: .sandbox, owner: "test",
            settings: NotificationHistoryReplay.Settings(onlyFailures: true))
        let request = try #require(fake.historyRequests.withLock { $0.first })
        #expect(request.onlyFailures == true)
        #expect(request.startDate == t0.adding(milliseconds: -29 * Self.day))
        #expect(request.endDate == t0)
    }

    @Test func aCursorLeasedByAnotherInstanceIsLeftAlone() async throws {
        let fake = FakeAppStore()
        let (harness, app) = try await Self.setUp(fake)
        defer { Task { await harness.stop() } }
        let now = harness.clock.now
        _ = try await harness.store.write { tx in
            try tx.leaseHistoryCursor(
                appId: app.appId, environment: .sandbox, owner: "other-instance", now: now, leaseMilliseconds: 60_000)
        }
        let pass = await harness.application.historyReplayWorker.runOnce()
        #expect(pass.runs["\(app.appId)/Sandbox"]?.leased == false)
        #expect(fake.historyRequests.withLock { $0 }.isEmpty)
        // Its lease over, the next pass replays.
        harness.clock.set(now.adding(milliseconds: 60_001))
        #expect(await harness.application.historyReplayWorker.runOnce().runs["\(app.appId)/Sandbox"]?.completed == true)
    }

    @Test func aLostRenewalIsFoundByPollingAfterTheExpiryDelay() async throws {
        let fake = FakeAppStore()
        let (harness, app) = try await Self.setUp(fake)
        defer { Task { await harness.stop() } }
        let signer = AppStoreSigner(ca: harness.ca)
        let t0 = TestSigning.signedDate
        let original = uniqueDigits()
        let delivered = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/notifications/appstore",
            json: ["signedPayload": try Self.subscribed(signer, original: original, at: t0)])
        #expect(delivered.status == 200)
        // DID_RENEW at day 30 is lost; Apple's statuses know the renewal.
        let renewed = try signer.transaction(
            id: uniqueDigits(), originalId: original, purchase: t0.plus(days: 30), expires: t0.plus(days: 60),
            signed: t0.plus(days: 30), reason: .renewal)
        fake.answers.withLock {
            $0.statuses[original] = [
                SignedSubscriptionState(
                    signedTransactionInfo: renewed,
                    signedRenewalInfo: try? signer.renewal(originalId: original, signed: t0.plus(days: 30)))
            ]
        }
        let worker = harness.application.statusPollingWorker
        // Within the delay (an hour by default) after the expiry nothing is polled yet.
        harness.clock.set(t0.plus(days: 30).adding(milliseconds: 3_000_000))
        #expect(await worker.runOnce() == 0)
        harness.clock.set(t0.plus(days: 30).adding(milliseconds: 3_600_000))
        #expect(await worker.runOnce() == 1)
        #expect(fake.calls.withLock { $0 } == ["statuses \(original)"])
        // The facts belong to the purchase's owner, whoever posted nothing: here an unowned
        // purchase stays unclaimed, so the watch shows it heard and the next round is quiet.
        #expect(await worker.runOnce() == 0)
        let watch = try await harness.store.read {
            try $0.subscriptionWatch(appId: app.appId, environment: .sandbox, originalTransactionId: original)
        }
        #expect(watch?.expiresAt == t0.plus(days: 60))
        #expect(
            harness.application.metrics.render().contains("storekeeper_status_polls_total{outcome=\"unclaimed\"} 1"))
    }

    @Test func aPolledRenewalReachesTheOwningCustomer() async throws {
        let fake = FakeAppStore()
        let (harness, app) = try await Self.setUp(fake)
        defer { Task { await harness.stop() } }
        let signer = AppStoreSigner(ca: harness.ca)
        let t0 = TestSigning.signedDate
        let original = uniqueDigits()
        let first = try signer.transaction(
            id: original, originalId: original, purchase: t0, expires: t0.plus(days: 30), signed: t0)
        let posted = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/customers/dana/transactions", key: app.publicKey,
            json: ["signedTransaction": first])
        #expect(posted.status == 200)
        let renewed = try signer.transaction(
            id: uniqueDigits(), originalId: original, purchase: t0.plus(days: 30), expires: t0.plus(days: 60),
            signed: t0.plus(days: 30), reason: .renewal)
        fake.answers.withLock {
            $0.statuses[original] = [SignedSubscriptionState(signedTransactionInfo: renewed, signedRenewalInfo: nil)]
        }
        harness.clock.set(t0.plus(days: 30).adding(milliseconds: 3_600_000))
        let before = try await harness.request("GET", "/v1/apps/\(app.appId)/customers/dana", key: app.publicKey)
        let proBefore = (before.json["entitlements"] as? [String: Any])?["pro"] as? [String: Any]
        #expect(proBefore?["isActive"] as? Bool == false)
        #expect(await harness.application.statusPollingWorker.runOnce() == 1)
        let after = try await harness.request("GET", "/v1/apps/\(app.appId)/customers/dana", key: app.publicKey)
        let pro = (after.json["entitlements"] as? [String: Any])?["pro"] as? [String: Any]
        #expect(pro?["isActive"] as? Bool == true)
        #expect(pro?["expiresDate"] as? Int64 == t0.plus(days: 60).millisecondsSince1970)
    }

    @Test func workersAreOffForAnAppThatTurnedThemOff() async throws {
        let fake = FakeAppStore()
        let (harness, app) = try await Self.setUp(fake, recovery: ["historyReplay": false, "statusPolling": false])
        defer { Task { await harness.stop() } }
        let shown = try await harness.request("GET", "/v1/admin/apps/\(app.appId)", key: ServerHarness.adminKey)
        #expect(
            shown.json["recovery"] as? [String: Bool]
                == [
                    "historyReplay": false, "statusPolling": false, "onDemandSync": true, "playVoidedPolling": true,
                    "playReread": true,
                ])
        #expect(await harness.application.historyReplayWorker.runOnce().runs.isEmpty)
        #expect(await harness.application.statusPollingWorker.runOnce() == 0)
        #expect(fake.calls.withLock { $0 }.isEmpty)
    }

    /// Apple's statuses and history answer for a whole Apple account, whichever of its
    /// transaction ids is asked: a sync asks once per account, not once per purchase (it asked
    /// statuses and history for each of this customer's 15 purchases: 29 calls, each history a
    /// full copy), never asks about consumables, and skips an id Apple does not know instead of
    /// failing the whole sync.
    @Test func syncAsksAppleOncePerAccountAndSkipsUnknownIds() async throws {
        let fake = FakeAppStore()
        let (harness, app) = try await Self.setUp(fake)
        defer { Task { await harness.stop() } }
        let signer = AppStoreSigner(ca: harness.ca)
        let t0 = TestSigning.signedDate
        let subscription = uniqueDigits()
        let otherAccount = uniqueDigits()
        var posted = [
            try signer.transaction(
                id: subscription, originalId: subscription, purchase: t0, expires: t0.plus(days: 30), signed: t0),
            try signer.transaction(
                id: otherAccount, originalId: otherAccount, purchase: t0, expires: t0.plus(days: 30), signed: t0),
        ]
        let unlocks = [uniqueDigits(), uniqueDigits()].sorted()
        for id in unlocks {
            posted.append(try signer.oneTime(id: id, productId: "com.example.unlock", type: .nonConsumable, signed: t0))
        }
        for _ in 0..<12 {
            posted.append(
                try signer.oneTime(id: uniqueDigits(), productId: "com.example.coins", type: .consumable, signed: t0))
        }
        for signed in posted {
            let answer = try await harness.request(
                "POST", "/v1/apps/\(app.appId)/customers/erin/transactions", key: app.publicKey,
                json: ["signedTransaction": signed])
            #expect(answer.status == 200, "\(answer.text)")
        }
        fake.calls.withLock { $0 = [] }
        let renewed = try signer.transaction(
            id: uniqueDigits(), originalId: subscription, purchase: t0.plus(days: 30), expires: t0.plus(days: 60),
            signed: t0.plus(days: 30), reason: .renewal)
        let resigned = try signer.oneTime(
            id: unlocks[1], productId: "com.example.unlock", type: .nonConsumable, signed: t0.plus(days: 31))
        fake.answers.withLock {
            // The other subscription is from an Apple account this environment does not know.
            $0.unknown = [otherAccount]
            $0.statuses[subscription] = [
                SignedSubscriptionState(signedTransactionInfo: renewed, signedRenewalInfo: nil)
            ]
            $0.history[unlocks[0]] = [
                try! signer.oneTime(id: unlocks[0], productId: "com.example.unlock", type: .nonConsumable, signed: t0),
                resigned,
            ]
        }
        harness.clock.set(t0.plus(days: 31))
        let synced = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/customers/erin/sync", key: app.publicKey)
        #expect(synced.status == 200, "\(synced.text)")
        let pro = (synced.json["entitlements"] as? [String: Any])?["pro"] as? [String: Any]
        #expect(pro?["expiresDate"] as? Int64 == t0.plus(days: 60).millisecondsSince1970)
        let expected = [subscription, otherAccount].sorted().map { "statuses \($0)" } + ["history \(unlocks[0])"]
        #expect(fake.calls.withLock { $0 } == expected)
        // The customer's alias shares its slot: no second round of calls.
        let aliased = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/customers/erin/aliases", key: app.secretKey, json: ["alias": "erin-ipad"])
        #expect(aliased.status == 200, "\(aliased.text)")
        let viaAlias = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/customers/erin-ipad/sync", key: app.publicKey)
        #expect(viaAlias.status == 429)
        #expect(fake.calls.withLock { $0 }.count == expected.count)
    }

    @Test func syncAnswersFreshStateAndIsRateLimitedPerCustomer() async throws {
        let fake = FakeAppStore()
        let (harness, app) = try await Self.setUp(fake)
        defer { Task { await harness.stop() } }
        let signer = AppStoreSigner(ca: harness.ca)
        let t0 = TestSigning.signedDate
        let original = uniqueDigits()
        let first = try signer.transaction(
            id: original, originalId: original, purchase: t0, expires: t0.plus(days: 30), signed: t0)
        #expect(
            try await harness.request(
                "POST", "/v1/apps/\(app.appId)/customers/erin/transactions", key: app.publicKey,
                json: ["signedTransaction": first]
            ).status == 200)
        fake.calls.withLock { $0 = [] }
        let renewed = try signer.transaction(
            id: uniqueDigits(), originalId: original, purchase: t0.plus(days: 30), expires: t0.plus(days: 60),
            signed: t0.plus(days: 30), reason: .renewal)
        fake.answers.withLock {
            $0.statuses[original] = [SignedSubscriptionState(signedTransactionInfo: renewed, signedRenewalInfo: nil)]
        }
        harness.clock.set(t0.plus(days: 31))
        let synced = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/customers/erin/sync", key: app.publicKey)
        #expect(synced.status == 200, "\(synced.text)")
        let pro = (synced.json["entitlements"] as? [String: Any])?["pro"] as? [String: Any]
        #expect(pro?["isActive"] as? Bool == true)
        #expect(pro?["expiresDate"] as? Int64 == t0.plus(days: 60).millisecondsSince1970)
        #expect(fake.calls.withLock { $0 } == ["statuses \(original)"])
        let again = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/customers/erin/sync", key: app.publicKey)
        #expect(again.status == 429)
        #expect((again.json["error"] as? [String: Any])?["code"] as? String == "rate_limited")
        let retryAfter = Int(again.header("Retry-After") ?? "") ?? 0
        #expect((1...60).contains(retryAfter))
        #expect(fake.calls.withLock { $0 }.count == 1)
        // Another customer is not held back by erin's sync; an unknown one is 404.
        let unknown = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/customers/nobody/sync", key: app.publicKey)
        #expect(unknown.status == 404)
        let metrics = harness.application.metrics.render()
        #expect(metrics.contains("storekeeper_customer_syncs_total{outcome=\"rate_limited\"} 1"))
        #expect(metrics.contains("storekeeper_customer_syncs_total{outcome=\"synced\"} 1"))
    }

    /// Two servers on one PostgreSQL with the workers on: one is stopped in the middle of a
    /// replay and the other finishes it; every notification is stored once and the cursor ends
    /// where the finishing run ended; a polling sweep by both polls each subscription once.
    @Test(.enabled(if: TestDatabase.postgresURL != nil, Comment(rawValue: TestDatabase.postgresSkip)))
    func twoInstancesShareTheWorkOnPostgreSQL() async throws {
        let fake = FakeAppStore()
        // A database of its own, so that each worker's pass holds this app alone (in the shared
        // one, other suites' apps with App Store credentials went through the fake too).
        let (database, drop) = try TestDatabase.ownPostgres()
        guard case .postgres(let url) = database else {
            Issue.record("ownPostgres gave \(database)")
            return
        }
        let first = try await ServerHarness(database: .postgres(url), connections: { _, _, _ in fake })
        // One deployment: the same database and the same secrets key.
        let second = try await ServerHarness(
            database: .postgres(url), connections: { _, _, _ in fake }, secrets: first.secrets)
        defer {
            Task {
                await first.stop()
                await second.stop()
                drop()
            }
        }
        let app = try await first.createApp(settings: [
            "appStoreConnect": [
                "keyId": "KEY0000001", "issuerId": "00000000-0000-4000-8000-000000000001",
                "privateKeyPEM": try PrivateKey.generateP256().pkcs8PEM,
            ]
        ])
        let signer = AppStoreSigner(ca: first.ca)
        let t0 = TestSigning.signedDate
        let originals = (0..<6).map { _ in uniqueDigits() }
        var page: [String] = []
        for (index, original) in originals.enumerated() {
            page.append(try Self.subscribed(signer, original: original, at: t0.adding(milliseconds: Int64(index))))
        }
        fake.answers.withLock { $0.notificationPages = [Array(page[0..<3]), Array(page[3...])] }
        // The first replay stays in its first page until it is stopped: under a full parallel
        // run the first instance took over 2 s to lease the app (the wait below was 2 s) and
        // could finish the 400 ms pages before the second looked.
        fake.delay.withLock { $0 = .seconds(60) }
        let now = t0.plus(days: 1)
        first.clock.set(now)
        second.clock.set(now)
        // Only this app's cursor matters: other suites share the database.
        func cursor() async throws -> HistoryCursor? { try await Self.cursor(first, app.appId) }
        let stopped = Task { await first.application.historyReplayWorker.runOnce() }
        for _ in 0..<3_000 where try await cursor()?.leaseOwner == nil {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(try await cursor()?.leaseOwner == first.application.historyReplayWorker.owner)
        #expect(await second.application.historyReplayWorker.runOnce().runs["\(app.appId)/Sandbox"]?.leased == false)
        stopped.cancel()
        _ = await stopped.value
        fake.delay.withLock { $0 = .milliseconds(10) }
        #expect(try await cursor()?.leaseOwner == nil)
        let finished = try #require(
            await second.application.historyReplayWorker.runOnce().runs["\(app.appId)/Sandbox"])
        #expect(finished.completed)
        #expect(try await cursor()?.cursorAt == now)
        #expect(try await first.store.read { try $0.notificationCount(appId: app.appId) } == 6)

        // Both instances sweep at once: each lost renewal is polled by exactly one of them.
        fake.delay.withLock { $0 = .milliseconds(100) }
        fake.calls.withLock { $0 = [] }
        // The last of them expires 5 ms after the first.
        let later = t0.plus(days: 30).adding(milliseconds: 3_600_000 + 5)
        first.clock.set(later)
        second.clock.set(later)
        async let one = first.application.statusPollingWorker.runOnce()
        async let two = second.application.statusPollingWorker.runOnce()
        let polled = await one + two
        // Other suites' apps share the database: look at this app's subscriptions only.
        let mine = Set(originals.map { "statuses \($0)" })
        let calls = fake.calls.withLock { $0 }.filter { mine.contains($0) }
        #expect(polled >= 6)
        #expect(calls.sorted() == mine.sorted())
    }
}
