import AppStoreClient
import AppStoreModels
import StorekeeperIngestion
import Synchronization
import Testing

/// The per-app App Store pacing: Apple's documented per-endpoint limits (Sandbox a tenth), calls
/// spread at that rate after one second's burst, and an endpoint held after a 429.
struct AppStoreRateLimiterTests {
    @Test func documentedLimitsPerEndpointAndEnvironment() {
        let production = AppStoreRateLimits.documented(for: .production)
        let sandbox = AppStoreRateLimits.documented(for: .sandbox)
        #expect(production.rate(of: .getAllSubscriptionStatuses) == 50)
        #expect(production.rate(of: .getNotificationHistory) == 50)
        #expect(production.rate(of: .setAppAccountToken) == 20)
        #expect(production.rate(of: .getRefundHistory) == 10)
        #expect(production.rate(of: .requestTestNotification) == 1)
        #expect(abs(sandbox.rate(of: .getAllSubscriptionStatuses) - 5) < 1e-9)
        #expect(abs(sandbox.rate(of: .lookUpOrderId) - 1) < 1e-9)
    }

    @Test func callsAreSpreadAtTheRateAfterOneSecondsBurst() {
        var schedule = AppStoreRateSchedule(limits: AppStoreRateLimits.documented(for: .sandbox))
        // 5 per second: five go at once, then one every 200 ms.
        let waits = (0..<8).map { _ in schedule.reserve(.getAllSubscriptionStatuses, at: 100) }
        #expect(waits.map { ($0 * 1000).rounded() } == [0, 0, 0, 0, 0, 200, 400, 600])
        // Another endpoint has its own budget.
        #expect(schedule.reserve(.getNotificationHistory, at: 100) == 0)
        // After a quiet while the burst is available again.
        #expect(schedule.reserve(.getAllSubscriptionStatuses, at: 110) == 0)
    }

    @Test func anEndpointIsHeldAfterARateLimitAnswer() {
        var schedule = AppStoreRateSchedule(limits: AppStoreRateLimits.documented(for: .production))
        schedule.hold(.getAllSubscriptionStatuses, for: 30, at: 10)
        #expect(schedule.reserve(.getAllSubscriptionStatuses, at: 12) == 28)
        #expect(schedule.reserve(.getTransactionInfo, at: 12) == 0)
    }

    @Test func theLimiterWaitsForItsSlot() async throws {
        let clock = VirtualSeconds()
        let limiter = AppStoreRateLimiter(
            limits: AppStoreRateLimits(requestsPerSecond: [:], otherwise: 1), burstSeconds: 1,
            now: { clock.now }, sleep: { clock.advance($0) })
        try await limiter.acquire(.getTransactionInfo)
        try await limiter.acquire(.getTransactionInfo)
        try await limiter.acquire(.getTransactionInfo)
        #expect(limiter.waited.count == 2)
        #expect(abs(limiter.waited.seconds - 2) < 1e-9)
        #expect(abs(clock.now - 2) < 1e-9)
    }
}

/// Seconds that pass only when a sleep asks them to.
final class VirtualSeconds: Sendable {
    private let value = Mutex<Double>(0)
    var now: Double { value.withLock { $0 } }
    func advance(_ duration: Duration) {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        value.withLock { $0 += seconds }
    }
}
