import StorekeeperIngestion
import Synchronization
import Testing

/// The per-customer sync throttle's bounded table.
struct CustomerSyncThrottleTests {
    /// A full table of live entries makes room by dropping the oldest: it once refused every
    /// new customer instead, so a flood of ids shut on-demand sync for all apps of the process.
    @Test func aFullTableDropsTheOldestInsteadOfRefusingNewCustomers() throws {
        let clock = Mutex(0.0)
        let throttle = CustomerSyncThrottle(interval: .seconds(60), capacity: 2, now: { clock.withLock { $0 } })
        try throttle.admit(appId: "a", appUserId: "one")
        clock.withLock { $0 = 1 }
        try throttle.admit(appId: "a", appUserId: "two")
        clock.withLock { $0 = 2 }
        // Full of live entries: "three" is admitted, "one" (the oldest) makes room.
        try throttle.admit(appId: "b", appUserId: "three")
        #expect(throws: Never.self) { try throttle.admit(appId: "a", appUserId: "one") }
        // "one" took the place of "two" (the oldest then); "two" is new again.
        #expect(throws: Never.self) { try throttle.admit(appId: "a", appUserId: "two") }
        do {
            try throttle.admit(appId: "a", appUserId: "two")
            Issue.record("a second sync within the interval was admitted")
        } catch {
            #expect(error.code == .rateLimited)
            #expect(error.retryAfterSeconds == 60)
        }
        // After the interval, the same customer is admitted again.
        clock.withLock { $0 = 62.5 }
        #expect(throws: Never.self) { try throttle.admit(appId: "a", appUserId: "two") }
    }
}
