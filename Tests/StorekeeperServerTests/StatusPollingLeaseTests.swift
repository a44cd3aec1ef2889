import AppStoreClient
import AppStoreModels
import Foundation
import Storage
import StorekeeperIngestion
import StorekeeperServer
import StorekeeperTesting
import Testing

/// Issue 12: a polling batch ends inside its lease, whatever the app's rate. At a low
/// `appStoreRatePercent` a fixed batch of 50 could outlast its lease, and another instance
/// could then claim and poll the same subscriptions. The App Store rate limiter here runs on
/// the test's hand-moved clock (its waits move the clock), so a slow rate costs no real time.
@Suite(.serialized) struct StatusPollingLeaseTests {
    static let lease: Int64 = 60_000

    /// A harness whose app has `count` sandbox subscriptions past their expiry (plus the delay)
    /// with the expiry's notification lost, and a polling worker over the harness's store whose
    /// limiter allows 3% of Sandbox's rate (0.15 Get All Subscription Statuses a second) and
    /// whose waits last `slowdown` times what the limiter asked (other paths of the app taking
    /// slots too).
    static func world(count: Int, slowdown: Int64, owner: String) async throws -> (
        harness: ServerHarness, app: ServerHarness.AppKeys, fake: FakeAppStore, worker: StatusPollingWorker,
        originals: [String]
    ) {
        let fake = FakeAppStore()
        let (harness, app) = try await RecoveryWorkerTests.setUp(fake)
        let signer = AppStoreSigner(ca: harness.ca)
        let t0 = TestSigning.signedDate
        var originals: [String] = []
        for _ in 0..<count {
            let original = uniqueDigits()
            originals.append(original)
            let delivered = try await harness.request(
                "POST", "/v1/apps/\(app.appId)/notifications/appstore",
                json: ["signedPayload": try RecoveryWorkerTests.subscribed(signer, original: original, at: t0)])
            #expect(delivered.status == 200)
        }
        harness.clock.set(t0.plus(days: 30).adding(milliseconds: 3_600_000))
        return (
            harness, app, fake, worker(harness: harness, fake: fake, slowdown: slowdown, owner: owner), originals
        )
    }

    static func worker(harness: ServerHarness, fake: FakeAppStore, slowdown: Int64, owner: String)
        -> StatusPollingWorker
    {
        let clock = harness.clock
        let limiters = AppStoreRateLimiters { environment in
            AppStoreRateLimiter(
                limits: AppStoreRateLimits.documented(for: environment).scaled(by: 0.03),
                // The limiter's time runs `slowdown` times slower than the server's: each wait it
                // asks for lasts that much longer on the server's clock.
                now: { Double(clock.now.millisecondsSince1970) / 1000 / Double(slowdown) },
                sleep: { wait in
                    let milliseconds =
                        wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000
                    clock.advance(milliseconds: milliseconds * slowdown)
                })
        }
        let ingestion = Ingestion(
            store: harness.store, clock: ServerClock(now: clock.function), connections: { _, _, _ in fake },
            secrets: harness.secrets, rateLimiters: limiters)
        return StatusPollingWorker(
            ingestion: ingestion, metrics: ServerMetrics(now: clock.function),
            settings: StatusPollingWorker.Settings(leaseMilliseconds: lease), owner: owner)
    }

    static func lastPolled(_ harness: ServerHarness, _ appId: String, _ originals: [String]) async throws
        -> [String: Timestamp]
    {
        try await harness.store.read { reader in
            var polled: [String: Timestamp] = [:]
            for original in originals {
                if let at = try reader.subscriptionWatch(
                    appId: appId, environment: .sandbox, originalTransactionId: original)?.lastPolledAt
                {
                    polled[original] = at
                }
            }
            return polled
        }
    }

    /// The batch is sized from the rate: 0.15 polls a second in half a 60 s lease is 4, so each
    /// round polls 4 and ends inside its lease (a batch of 50 would have polled all 12, the last
    /// at 73 s).
    @Test func aBatchIsSizedFromTheRateAndEndsInsideItsLease() async throws {
        let (harness, app, fake, worker, originals) = try await Self.world(count: 12, slowdown: 1, owner: "poll-a")
        defer { Task { await harness.stop() } }
        var rounds: [Int] = []
        var seen: [String: Timestamp] = [:]
        for _ in 0..<4 {
            let start = harness.clock.now
            rounds.append(await worker.runOnce())
            let polled = try await Self.lastPolled(harness, app.appId, originals)
            for (original, at) in polled where seen[original] == nil {
                #expect(
                    at < start.adding(milliseconds: Self.lease), "\(original) polled \(at) after a claim at \(start)")
                seen[original] = at
            }
        }
        #expect(rounds == [4, 4, 4, 0])
        #expect(seen.count == 12)
        #expect(fake.calls.withLock { $0 }.sorted() == originals.map { "statuses \($0)" }.sorted())
    }

    /// When the limiter is slower than its rate (here four times: other paths of the app take
    /// slots too), what is left at three quarters of the lease is given back unpolled, claimable
    /// at once by another instance (the same instant: no lease to wait for); nothing is polled
    /// after its lease or twice.
    @Test func whatIsLeftAtThreeQuartersOfTheLeaseIsGivenBack() async throws {
        let (harness, app, fake, worker, originals) = try await Self.world(count: 4, slowdown: 4, owner: "poll-a")
        defer { Task { await harness.stop() } }
        let start = harness.clock.now
        // Polls at 0 s, 26.7 s and 53.3 s; then, past 45 s, the last goes back (polled, it
        // would have ended at 80 s, after the lease).
        #expect(await worker.runOnce() == 3)
        let polled = try await Self.lastPolled(harness, app.appId, originals)
        #expect(polled.count == 3)
        for at in polled.values { #expect(at < start.adding(milliseconds: Self.lease)) }
        let other = Self.worker(harness: harness, fake: fake, slowdown: 1, owner: "poll-b")
        #expect(await other.runOnce() == 1)
        #expect(try await Self.lastPolled(harness, app.appId, originals).count == 4)
        #expect(fake.calls.withLock { $0 }.sorted() == originals.map { "statuses \($0)" }.sorted())
    }
}
