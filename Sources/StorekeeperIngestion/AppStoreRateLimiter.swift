import AppStoreClient
import AppStoreModels
import Synchronization

/// The pacing of one app's calls in one environment, per endpoint: a virtual-scheduling token
/// bucket (GCRA). Each call is given the next free slot `1/rate` after the previous one, and
/// at most `burstSeconds` worth of calls may start at once; so a sweep of a thousand polls is
/// spread at Apple's documented rate instead of bursting into 429s. A 429 holds the endpoint
/// until Apple's `Retry-After`.
///
/// Time is an argument (`reserve(_:at:)` answers how long to wait); `AppStoreRateLimiter` adds
/// the clock and the sleep.
/// - Note: A value; not thread-safe by itself (the limiter keeps it behind a `Mutex`).
public struct AppStoreRateSchedule: Sendable {
    public let limits: AppStoreRateLimits
    public let burstSeconds: Double
    /// Per endpoint: the theoretical arrival time of the next call (seconds, monotonic).
    private var nextSlot: [AppStoreServerAPIEndpoint: Double] = [:]
    private var heldUntil: [AppStoreServerAPIEndpoint: Double] = [:]

    public init(limits: AppStoreRateLimits, burstSeconds: Double = 1) {
        self.limits = limits
        self.burstSeconds = max(0, burstSeconds)
    }

    /// Reserves a slot for one call to `endpoint` at `now` (seconds) and returns how many
    /// seconds the caller must wait before sending it (0: now).
    public mutating func reserve(_ endpoint: AppStoreServerAPIEndpoint, at now: Double) -> Double {
        let interval = 1 / limits.rate(of: endpoint)
        // At least one call may always go at once, whatever the rate.
        let tolerance = max(interval * (limits.rate(of: endpoint) * burstSeconds - 1), 0)
        let earliest = max(now, heldUntil[endpoint] ?? now)
        let slot = max(nextSlot[endpoint] ?? earliest, earliest)
        let start = max(earliest, slot - tolerance)
        nextSlot[endpoint] = slot + interval
        return start - now
    }

    /// Apple answered 429: nothing more goes to `endpoint` before `now + seconds`.
    public mutating func hold(_ endpoint: AppStoreServerAPIEndpoint, for seconds: Double, at now: Double) {
        let until = now + max(0, seconds)
        heldUntil[endpoint] = max(heldUntil[endpoint] ?? until, until)
        nextSlot[endpoint] = max(nextSlot[endpoint] ?? until, until)
    }
}

/// The one limiter of an app in one environment, shared by every worker and request path of
/// the process (`AppStoreRateLimiters` keeps one per app and environment, across runtime
/// rebuilds). Several instances share Apple's budget, so each should be given its share
/// (`ServerConfiguration.appStoreRateShare`).
/// - Note: Thread-safe: the schedule sits behind a `Mutex`; waiting happens outside it.
public final class AppStoreRateLimiter: Sendable {
    private let schedule: Mutex<AppStoreRateSchedule>
    private let now: @Sendable () -> Double
    private let sleep: @Sendable (Duration) async throws -> Void
    private let waits = Mutex<(count: Int, seconds: Double)>((0, 0))
    private let slots = Mutex<[AppStoreServerAPIEndpoint: Int]>([:])

    public init(
        limits: AppStoreRateLimits, burstSeconds: Double = 1,
        now: @escaping @Sendable () -> Double = AppStoreRateLimiter.monotonicSeconds,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        schedule = Mutex(AppStoreRateSchedule(limits: limits, burstSeconds: burstSeconds))
        self.now = now
        self.sleep = sleep
    }

    public var limits: AppStoreRateLimits { schedule.withLock { $0.limits } }

    /// Waits for the endpoint's next slot. Throws `cancelled` if the task is cancelled while
    /// waiting (the slot is spent: pacing errs on the slow side).
    public func acquire(_ endpoint: AppStoreServerAPIEndpoint) async throws(AppStoreClientError) {
        let instant = now()
        let wait = schedule.withLock { $0.reserve(endpoint, at: instant) }
        slots.withLock { $0[endpoint, default: 0] += 1 }
        guard wait > 0 else { return }
        waits.withLock {
            $0.count += 1
            $0.seconds += wait
        }
        do {
            try await sleep(.milliseconds(Int64((wait * 1000).rounded(.up))))
        } catch {
            throw AppStoreClientError(
                .cancelled, "cancelled while waiting for the App Store rate limit", endpoint: endpoint.rawValue)
        }
    }

    /// Apple refused a call with 429: hold the endpoint for `retryAfter` (60 s when Apple gave none).
    public func rateLimited(_ endpoint: AppStoreServerAPIEndpoint, retryAfter: Duration?) {
        let seconds = retryAfter.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 } ?? 60
        let instant = now()
        schedule.withLock { $0.hold(endpoint, for: seconds, at: instant) }
    }

    /// Calls that had to wait, and how long they waited in total (metrics).
    public var waited: (count: Int, seconds: Double) { waits.withLock { $0 } }

    /// Slots given out for `endpoint` since the start: one per call to Apple.
    public func slotsTaken(_ endpoint: AppStoreServerAPIEndpoint) -> Int { slots.withLock { $0[endpoint] ?? 0 } }

    /// Seconds on a monotonic clock (never the wall clock: pacing must not jump with it).
    public static let monotonicSeconds: @Sendable () -> Double = {
        let elapsed = ContinuousClock.now - origin
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
    private static let origin = ContinuousClock.now
}

/// One `AppStoreRateLimiter` per app and environment for the whole process, built on first use
/// with Apple's documented limits for the environment times `share`.
/// - Note: Thread-safe: the table sits behind a `Mutex`.
public final class AppStoreRateLimiters: Sendable {
    private struct Key: Hashable {
        var appId: String
        var environment: AppStoreEnvironment
    }

    private let table = Mutex<[Key: AppStoreRateLimiter]>([:])
    private let make: @Sendable (AppStoreEnvironment) -> AppStoreRateLimiter

    /// - Parameter share: the fraction of Apple's limits this process may use (1 for a single
    ///   instance; 1/n for n instances sharing an app). Above 1 only against an App Store that
    ///   is not Apple's (the simulator with its limits lifted: `storekeeper backfill
    ///   --rate-percent`, `make bench`); the callers check that.
    public init(share: Double = 1) {
        let share = min(max(share, 0.001), 1000)
        make = { AppStoreRateLimiter(limits: AppStoreRateLimits.documented(for: $0).scaled(by: share)) }
    }

    /// Limiters built by `make` (tests: a virtual clock, other limits).
    public init(make: @escaping @Sendable (AppStoreEnvironment) -> AppStoreRateLimiter) {
        self.make = make
    }

    public func limiter(appId: String, environment: AppStoreEnvironment) -> AppStoreRateLimiter {
        let key = Key(appId: appId, environment: environment)
        return table.withLock { table in
            if let existing = table[key] { return existing }
            let limiter = make(environment)
            table[key] = limiter
            return limiter
        }
    }
}
