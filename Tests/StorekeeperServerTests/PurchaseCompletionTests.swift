import AppStoreClient
import AppStoreModels
import AppStoreTrust
import Foundation
import Storage
import StorekeeperIngestion
import StorekeeperServer
import StorekeeperTesting
import Synchronization
import Testing

/// Issue 11, defect 7: a verified signed transaction is stored and grants at once whatever Apple
/// does; the App Store Server API's statuses and history come inline when Apple answers within
/// `purchaseCompletionWaitMilliseconds`, else from a durable `purchase_completion` job.
/// And defect 9(e): the 409 for a missing App Store Connect key names what is missing.
@Suite(.serialized) struct PurchaseCompletionTests {
    static let outage = AppStoreClientError(.transportFailed, "connection refused")

    /// A fresh harness over the fake App Store, with an app and a signed purchase of `monthly`.
    struct Setup {
        let harness: ServerHarness
        let fake: FakeAppStore
        let app: ServerHarness.AppKeys
        let signer: AppStoreSigner
        let original: String
        let signed: String

        init(waitMilliseconds: Int = 2000) async throws {
            let fake = FakeAppStore()
            harness = try await ServerHarness(
                connections: { _, _, _ in fake }, purchaseCompletionWaitMilliseconds: waitMilliseconds)
            self.fake = fake
            app = try await harness.createApp()
            signer = AppStoreSigner(ca: harness.ca)
            original = uniqueDigits()
            let t0 = TestSigning.signedDate
            signed = try signer.transaction(
                id: original, originalId: original, purchase: t0, expires: t0.plus(days: 30), signed: t0)
            harness.clock.set(t0.plus(days: 1))
        }

        var path: String { "/v1/apps/\(app.appId)/customers/alice/transactions" }

        func post() async throws -> TestResponse {
            try await harness.request("POST", path, key: app.publicKey, json: ["signedTransaction": signed])
        }

        func customer() async throws -> TestResponse {
            try await harness.request("GET", "/v1/apps/\(app.appId)/customers/alice", key: app.publicKey)
        }

        func events() async throws -> [String] {
            let answer = try await harness.request(
                "GET", "/v1/apps/\(app.appId)/customers/alice/events", key: app.secretKey)
            return (answer.json["events"] as? [[String: Any]] ?? []).compactMap {
                ($0["event"] as? [String: Any])?["id"] as? String
            }
        }

        func factCount() async throws -> Int {
            let answer = try await harness.request(
                "GET", "/v1/apps/\(app.appId)/customers/alice/transactions?limit=500", key: app.secretKey)
            let renewals = try await harness.request(
                "GET", "/v1/apps/\(app.appId)/customers/alice/transactions?kind=renewalInfo&limit=500",
                key: app.secretKey)
            return (answer.json["items"] as? [Any] ?? []).count + (renewals.json["items"] as? [Any] ?? []).count
        }

        /// The purchase completion jobs in this (fresh SQLite) database, by id.
        func jobs() async throws -> [JobRecord] {
            try await harness.store.read { reader in
                try (1...20).compactMap { try reader.job(id: $0) }.filter { $0.kind == PurchaseCompletion.kind }
            }
        }

        /// What Apple adds once it answers: the customer turned auto-renew off on day 0.5.
        func appleKnowsAutoRenewIsOff() throws {
            let t0 = TestSigning.signedDate
            let renewal = try signer.renewal(originalId: original, signed: t0.plus(days: 0.5), autoRenew: false)
            fake.answers.withLock {
                $0.statuses[original] = [
                    SignedSubscriptionState(signedTransactionInfo: signed, signedRenewalInfo: renewal)
                ]
                $0.history[original] = [signed]
            }
        }
    }

    static func pro(_ response: TestResponse) -> [String: Any]? {
        (response.json["entitlements"] as? [String: Any])?["pro"] as? [String: Any]
    }

    @Test func appleUnavailableGrantsAtOnceAndAJobCompletesAfterAppleComesBack() async throws {
        let setup = try await Setup()
        defer { Task { await setup.harness.stop() } }
        let harness = setup.harness
        setup.fake.failure.withLock { $0 = Self.outage }

        let posted = try await setup.post()
        #expect(posted.status == 200, "\(posted.text)")
        #expect(posted.json["completion"] as? String == "pending")
        #expect(Self.pro(posted)?["isActive"] as? Bool == true)
        #expect(Self.pro(posted)?["willRenew"] as? Bool == true)
        // The ETag is the customer's, as a GET answers it.
        let read = try await setup.customer()
        #expect(posted.header("ETag") == read.header("ETag"))
        #expect(read.json["completion"] == nil)

        let queued = try await setup.jobs()
        #expect(queued.count == 1)
        let job = try #require(queued.first)
        let payload = try AppStoreJSON.decode(PurchaseCompletion.Payload.self, from: Data(job.payload.utf8))
        #expect(
            payload
                == PurchaseCompletion.Payload(
                    appId: setup.app.appId, environment: .sandbox, transactionId: setup.original, appUserId: "alice"))
        #expect(job.runAt == harness.clock.now)

        // Apple still down: the job is rescheduled 30 s later (jitter drawn at its middle).
        let worker = harness.application.jobWorker
        #expect(await worker.runDue() == 1)
        let retried = try #require(try await setup.jobs().first)
        #expect(retried.attempts == 1)
        #expect(retried.completedAt == nil && retried.failedAt == nil)
        #expect(retried.runAt == harness.clock.now.adding(milliseconds: 30_000))
        #expect(
            retried.lastError
                == "app_store_unavailable: The App Store did not answer (appstore.transportFailed); retry later.")
        #expect(await worker.runDue() == 0)
        #expect(try await setup.events() == ["INITIAL_PURCHASE/\(setup.original)"])

        // Apple comes back; once the job is due it applies what Apple adds.
        setup.fake.failure.withLock { $0 = nil }
        try setup.appleKnowsAutoRenewIsOff()
        harness.clock.set(harness.clock.now.adding(milliseconds: 30_000))
        #expect(await worker.runDue() == 1)
        let done = try #require(try await setup.jobs().first)
        #expect(done.attempts == 2)
        #expect(done.completedAt == harness.clock.now)
        let completed = try await setup.customer()
        #expect(Self.pro(completed)?["isActive"] as? Bool == true)
        #expect(Self.pro(completed)?["willRenew"] as? Bool == false)
        #expect(
            Self.pro(completed)?["unsubscribeDetectedAt"] as? Int64
                == TestSigning.signedDate.plus(days: 0.5).millisecondsSince1970)
        #expect(
            try await setup.events() == [
                "INITIAL_PURCHASE/\(setup.original)",
                "CANCELLATION/\(setup.original)/\(TestSigning.signedDate.plus(days: 0.5).millisecondsSince1970)",
            ])
        let metrics = try await harness.request("GET", "/metrics")
        #expect(metrics.text.contains("storekeeper_purchase_completions_total{outcome=\"pending\"} 1\n"))
        #expect(
            metrics.text.contains(
                "storekeeper_jobs_total{kind=\"purchase_completion\",outcome=\"completed\"} 1\n"))
        #expect(
            metrics.text.contains("storekeeper_jobs_total{kind=\"purchase_completion\",outcome=\"retried\"} 1\n"))
        #expect(await worker.runDue() == 0)

        // Running the completion again (a second job for the same purchase) applies nothing twice.
        let facts = try await setup.factCount()
        let state = try await setup.customer()
        try await harness.store.write { transaction in
            _ = try transaction.enqueueJob(
                appId: job.appId,
                kind: PurchaseCompletion.kind, payload: job.payload, runAt: harness.clock.now, dedupeKey: "again",
                at: harness.clock.now)
        }
        #expect(await worker.runDue() == 1)
        #expect(try await setup.jobs().count == 2)
        #expect(try await setup.jobs().allSatisfy { $0.completedAt != nil })
        #expect(try await setup.factCount() == facts)
        #expect(
            try await setup.events() == [
                "INITIAL_PURCHASE/\(setup.original)",
                "CANCELLATION/\(setup.original)/\(TestSigning.signedDate.plus(days: 0.5).millisecondsSince1970)",
            ])
        #expect(try await setup.customer().header("ETag") == state.header("ETag"))
    }

    @Test func theSamePostDuringAnOutageQueuesOneJob() async throws {
        let setup = try await Setup()
        defer { Task { await setup.harness.stop() } }
        setup.fake.failure.withLock { $0 = Self.outage }
        #expect(try await setup.post().json["completion"] as? String == "pending")
        #expect(try await setup.post().json["completion"] as? String == "pending")
        #expect(try await setup.jobs().count == 1)
    }

    /// A finished job frees its dedupe key: the same purchase posted again during a later
    /// outage is answered "pending" with a job that exists to complete it (before 0010 the key
    /// stayed taken, so "pending" was answered with no job queued).
    @Test func thePostAgainAfterTheJobFinishedQueuesANewJob() async throws {
        let setup = try await Setup()
        defer { Task { await setup.harness.stop() } }
        let harness = setup.harness
        setup.fake.failure.withLock { $0 = Self.outage }
        #expect(try await setup.post().json["completion"] as? String == "pending")
        setup.fake.failure.withLock { $0 = nil }
        try setup.appleKnowsAutoRenewIsOff()
        let worker = harness.application.jobWorker
        #expect(await worker.runDue() == 1)
        let first = try #require(try await setup.jobs().first)
        #expect(first.completedAt == harness.clock.now)

        setup.fake.failure.withLock { $0 = Self.outage }
        #expect(try await setup.post().json["completion"] as? String == "pending")
        let jobs = try await setup.jobs()
        #expect(jobs.count == 2)
        let second = try #require(jobs.last)
        #expect(second.id != first.id)
        #expect(second.payload == first.payload)
        #expect(second.completedAt == nil && second.failedAt == nil)
        // While it is unfinished, the key is still taken.
        #expect(try await setup.post().json["completion"] as? String == "pending")
        #expect(try await setup.jobs().count == 2)

        setup.fake.failure.withLock { $0 = nil }
        #expect(await worker.runDue() == 1)
        #expect(try await setup.jobs().map { $0.completedAt != nil } == [true, true])
        #expect(
            try await setup.events() == [
                "INITIAL_PURCHASE/\(setup.original)",
                "CANCELLATION/\(setup.original)/\(TestSigning.signedDate.plus(days: 0.5).millisecondsSince1970)",
            ])
    }

    @Test func aJobWhoseWorkerDiedIsRunAgainAndTheStaleLeaseAppliesNothing() async throws {
        let setup = try await Setup()
        defer { Task { await setup.harness.stop() } }
        let harness = setup.harness
        setup.fake.failure.withLock { $0 = Self.outage }
        _ = try await setup.post()
        setup.fake.failure.withLock { $0 = nil }
        try setup.appleKnowsAutoRenewIsOff()

        // A worker claims the job and dies before finishing it.
        let now = harness.clock.now
        let claimed = try await harness.store.write { transaction in
            try transaction.claimJobs(
                kind: PurchaseCompletion.kind, owner: "jobs-dead", now: now, leaseMilliseconds: 60_000, limit: 8)
        }
        #expect(claimed.count == 1)
        let worker = harness.application.jobWorker
        #expect(await worker.runDue() == 0)  // leased
        harness.clock.set(now.adding(milliseconds: 60_001))
        #expect(await worker.runDue() == 1)
        #expect(try await setup.jobs().first?.completedAt == harness.clock.now)
        let facts = try await setup.factCount()

        // The dead worker's late run finds its lease gone: nothing applied, no second completion.
        let handler = PurchaseCompletion(
            apps: harness.application.ingestion.apps, purchases: harness.application.ingestion.purchases)
        let job = try #require(claimed.first)
        let outcome = await handler.run(job, lease: JobLease(jobId: job.id, owner: "jobs-dead"))
        #expect(
            outcome
                == .retry("conflict: The job's lease was lost to another worker; its facts were not applied."))
        #expect(try await setup.factCount() == facts)
    }

    @Test func stoppingTheWorkerMidJobLeavesTheJobForTheNextOne() async throws {
        let setup = try await Setup(waitMilliseconds: 0)
        defer { Task { await setup.harness.stop() } }
        #expect(try await setup.post().json["completion"] as? String == "pending")
        setup.fake.delay.withLock { $0 = .seconds(60) }
        let worker = setup.harness.application.jobWorker
        let running = Task { await worker.run() }
        for _ in 0..<2000 where setup.fake.calls.withLock({ $0.isEmpty }) {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(setup.fake.calls.withLock { $0 } == ["statuses \(setup.original)"])
        running.cancel()
        await running.value
        let job = try #require(try await setup.jobs().first)
        #expect(job.attempts == 1)
        #expect(job.lastError == nil && job.failedAt == nil && job.completedAt == nil)
        #expect(job.leaseOwner != nil)
    }

    @Test func settingsLoadFromTheEnvironmentWithinBounds() throws {
        let loaded = try ServerConfiguration.load(
            environment: ["STOREKEEPER_PURCHASE_COMPLETION_WAIT_MILLISECONDS": "0", "STOREKEEPER_JOB_WORKER": "false"])
        #expect(loaded.purchaseCompletionWaitMilliseconds == 0)
        #expect(loaded.jobWorker == false)
        #expect(ServerConfiguration().purchaseCompletionWaitMilliseconds == 2000)
        #expect(ServerConfiguration().jobWorker == true)
        let tooLong = ["STOREKEEPER_PURCHASE_COMPLETION_WAIT_MILLISECONDS": "30001"]
        do {
            _ = try ServerConfiguration.load(environment: tooLong)
            Issue.record("30001 ms was accepted")
        } catch {
            #expect(error.code == "config.invalidValue")
            #expect(
                error.message
                    == "purchaseCompletionWaitMilliseconds from STOREKEEPER_PURCHASE_COMPLETION_WAIT_MILLISECONDS must be an integer in 0...30000"
            )
        }
    }

    @Test func appleSlowerThanTheWaitIsAnsweredPendingWithoutWaitingForIt() async throws {
        let setup = try await Setup(waitMilliseconds: 300)
        defer { Task { await setup.harness.stop() } }
        setup.fake.delay.withLock { $0 = .seconds(60) }
        let started = ContinuousClock.now
        let posted = try await setup.post()
        let elapsed = ContinuousClock.now - started
        #expect(posted.status == 200, "\(posted.text)")
        #expect(posted.json["completion"] as? String == "pending")
        #expect(Self.pro(posted)?["isActive"] as? Bool == true)
        // The call to Apple was cancelled at the wait, not waited out (generous bound: loaded machine).
        #expect(elapsed < .seconds(30))
        #expect(try await setup.jobs().count == 1)
    }

    @Test func aCallThatIgnoresCancellationDoesNotHoldTheAnswer() async throws {
        let setup = try await Setup(waitMilliseconds: 300)
        defer { Task { await setup.harness.stop() } }
        setup.fake.stall.withLock { $0 = .seconds(40) }
        let started = ContinuousClock.now
        let posted = try await setup.post()
        #expect(posted.json["completion"] as? String == "pending")
        // Answered at the wait, not when the stalled call would have ended (bound generous).
        #expect(ContinuousClock.now - started < .seconds(20))
    }

    @Test func appleAnsweringInTimeCompletesInlineAndQueuesNothing() async throws {
        let setup = try await Setup()
        defer { Task { await setup.harness.stop() } }
        try setup.appleKnowsAutoRenewIsOff()
        let posted = try await setup.post()
        #expect(posted.status == 200, "\(posted.text)")
        #expect(posted.json["completion"] as? String == "complete")
        #expect(Self.pro(posted)?["willRenew"] as? Bool == false)
        #expect(setup.fake.calls.withLock { $0 } == ["statuses \(setup.original)", "history \(setup.original)"])
        #expect(try await setup.jobs().isEmpty)

        // Waiting 0 completes every purchase in the background, without asking Apple inline.
        let background = try await Setup(waitMilliseconds: 0)
        defer { Task { await background.harness.stop() } }
        let queued = try await background.post()
        #expect(queued.json["completion"] as? String == "pending")
        #expect(background.fake.calls.withLock { $0 }.isEmpty)
        #expect(try await background.jobs().count == 1)
    }

    @Test func appleRefusalsAreRetriedAFewTimesThenRecordedAndTheGrantStays() async throws {
        let setup = try await Setup()
        defer { Task { await setup.harness.stop() } }
        let harness = setup.harness
        setup.fake.failure.withLock { $0 = AppStoreClientError(.apiError, "unauthorized", httpStatus: 401) }
        let posted = try await setup.post()
        #expect(posted.json["completion"] as? String == "pending")
        let worker = harness.application.jobWorker
        for attempt in 1...3 {
            #expect(await worker.runDue() == 1, "attempt \(attempt)")
            harness.clock.set(harness.clock.now.adding(milliseconds: 3_600_000))
        }
        #expect(await worker.runDue() == 0)
        let job = try #require(try await setup.jobs().first)
        #expect(job.attempts == 3)
        #expect(job.failedAt != nil && job.completedAt == nil)
        #expect(job.lastError == "app_store_error: The App Store request failed (appstore.apiError).")
        let audit = try await harness.store.read { try $0.auditEntries(after: nil, limit: 100) }
        let failed = audit.filter { $0.action == "purchase_completion.failed" }
        #expect(failed.count == 1)
        #expect(failed.first?.appId == setup.app.appId)
        #expect(
            failed.first?.detail
                == .object([
                    "jobId": .integer(job.id), "attempts": .integer(3),
                    "error": .string("app_store_error: The App Store request failed (appstore.apiError)."),
                ]))
        // The signed transaction Apple signed still grants.
        #expect(Self.pro(try await setup.customer())?["isActive"] as? Bool == true)
        let metrics = try await harness.request("GET", "/metrics")
        #expect(metrics.text.contains("storekeeper_jobs_total{kind=\"purchase_completion\",outcome=\"failed\"} 1\n"))
    }

    @Test func withoutAnAppStoreConnectKeyTheSignedTransactionStandsAlone() async throws {
        let harness = try await ServerHarness()
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        let t0 = TestSigning.signedDate
        let id = uniqueDigits()
        let signed = try AppStoreSigner(ca: harness.ca).transaction(
            id: id, originalId: id, purchase: t0, expires: t0.plus(days: 30), signed: t0)
        harness.clock.set(t0.plus(days: 1))
        let posted = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/customers/bob/transactions", key: app.publicKey,
            json: ["signedTransaction": signed])
        #expect(posted.status == 200)
        #expect(posted.json["completion"] as? String == "skipped")
        #expect(Self.pro(posted)?["isActive"] as? Bool == true)
    }

    /// Defect 9(e): with a shared secret set and the legacy flow off, the 409 says the key is
    /// missing and why the secret does not help, instead of asking for "(or shared secret)".
    @Test func missingAppStoreConnectKeyIsNamedForWhatTheAppHas() async throws {
        let harness = try await ServerHarness(connections: LiveAppStoreConnection.factory(clock: .system))
        defer { Task { await harness.stop() } }
        let withSecret = try await harness.createApp()
        let withoutSecret = try await harness.createApp(settings: ["sharedSecret": NSNull()])
        let legacy = try await harness.createApp(settings: ["legacyReceiptFlow": true])
        func post(_ app: ServerHarness.AppKeys) async throws -> TestResponse {
            try await harness.request(
                "POST", "/v1/apps/\(app.appId)/customers/carol/transactions", key: app.publicKey,
                json: ["transactionId": "1234"])
        }
        func message(_ response: TestResponse) -> String? {
            (response.json["error"] as? [String: Any])?["message"] as? String
        }
        let secretOnly = try await post(withSecret)
        #expect(secretOnly.status == 409)
        #expect(secretOnly.errorCode == "app_store_not_configured")
        #expect(
            message(secretOnly)
                == "The app has no App Store Connect key configured; its shared secret only serves the legacy receipt flow (legacyReceiptFlow), which is off."
        )
        let nothing = try await post(withoutSecret)
        #expect(nothing.status == 409)
        #expect(message(nothing) == "The app has no App Store Connect key configured.")
        let legacyFlow = try await post(legacy)
        #expect(legacyFlow.status == 409)
        #expect(message(legacyFlow) == "The app has no App Store Connect key configured.")
        // A signed transaction needs no key: it stands alone (the shared secret cannot complete it).
        let t0 = TestSigning.signedDate
        let id = uniqueDigits()
        let signed = try AppStoreSigner(ca: harness.ca).transaction(
            id: id, originalId: id, purchase: t0, expires: t0.plus(days: 30), signed: t0)
        harness.clock.set(t0.plus(days: 1))
        let standing = try await harness.request(
            "POST", "/v1/apps/\(withSecret.appId)/customers/carol/transactions", key: withSecret.publicKey,
            json: ["signedTransaction": signed])
        #expect(standing.status == 200, "\(standing.text)")
        #expect(standing.json["completion"] as? String == "skipped")
        let restore = try await harness.request(
            "POST", "/v1/apps/\(withSecret.appId)/customers/carol/restore", key: withSecret.publicKey)
        #expect(restore.status == 409)
        #expect(message(restore) == message(secretOnly))
    }
}
