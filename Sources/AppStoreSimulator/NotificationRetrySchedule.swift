import AppStoreModels

/// Apple's retry schedule for server notifications: after a failed send the App Store retries
/// five times, 1, 12, 24, 48 and 72 hours after the previous attempt. Hours are scaled by the
/// simulator's `TimeScale`, so an accelerated store retries within seconds.
/// - Note: Immutable value; `Sendable`.
public struct NotificationRetrySchedule: Sendable, Hashable {
    public static let appleHours: [Double] = [1, 12, 24, 48, 72]
    public let hours: [Double]
    public let scale: TimeScale

    public init(scale: TimeScale, hours: [Double] = NotificationRetrySchedule.appleHours) {
        self.scale = scale
        self.hours = hours
    }

    /// When to try again after the `failedAttempts`-th failure at `attempt`; nil once the
    /// retries are used up.
    public func nextAttempt(after attempt: Timestamp, failedAttempts: Int) -> Timestamp? {
        guard failedAttempts >= 1, failedAttempts <= hours.count else { return nil }
        return attempt.adding(milliseconds: scale.milliseconds(hours: hours[failedAttempts - 1]))
    }
}

/// Which notifications are lost on the way (recovery tests): a fraction, drawn from a seeded
/// generator so that a run is repeatable. A lost notification is in the history with one failed
/// attempt and is never retried — only `restore` or the notification history bring it back.
/// - Note: Immutable value; `Sendable`.
public struct NotificationLossPolicy: Sendable, Hashable, Codable {
    public var fraction: Double
    public var seed: UInt64

    public init(fraction: Double, seed: UInt64 = 1) {
        self.fraction = fraction
        self.seed = seed
    }

    public static let none = NotificationLossPolicy(fraction: 0)
}

/// SplitMix64: small, seedable, good enough to pick lost notifications.
struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
