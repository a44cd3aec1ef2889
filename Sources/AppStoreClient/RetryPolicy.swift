import Foundation

/// How often and how long a call is retried: exponential backoff with jitter, Apple's
/// `Retry-After` honoured, bounded by attempts and by total time.
///
/// Which failures are retried depends on the endpoint's `RetrySafety` (see
/// `AppStoreServerAPIEndpoint`), not on this policy.
/// - Note: Immutable value; `Sendable`.
public struct RetryPolicy: Sendable {
    /// Requests per call, the first included (1 disables retries).
    public var maxAttempts: Int
    /// The pause before the first retry; later pauses grow by `multiplier`.
    public var initialBackoff: Duration
    public var multiplier: Double
    /// Upper bound of one computed pause.
    public var maxBackoff: Duration
    /// Fraction of each pause that is randomised (0 = none, 1 = anywhere in 0…pause), so that
    /// many clients that failed together do not retry together.
    public var jitter: Double
    /// A call gives up instead of starting a pause that would end after this much time since
    /// the call began (a `Retry-After` of an hour is not waited for).
    public var maxTotalTime: Duration
    /// Uniform random numbers in 0..<1 for the jitter; replaceable for reproducible tests.
    public var random: @Sendable () -> Double

    public init(
        maxAttempts: Int = 4, initialBackoff: Duration = .milliseconds(500), multiplier: Double = 2,
        maxBackoff: Duration = .seconds(20), jitter: Double = 0.5, maxTotalTime: Duration = .seconds(60),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.initialBackoff = initialBackoff
        self.multiplier = max(1, multiplier)
        self.maxBackoff = maxBackoff
        self.jitter = min(max(jitter, 0), 1)
        self.maxTotalTime = maxTotalTime
        self.random = random
    }

    /// No retries at all.
    public static let none = RetryPolicy(maxAttempts: 1)

    /// The pause before retry number `retry` (1 for the first retry) when Apple gave no
    /// `Retry-After`.
    public func backoff(beforeRetry retry: Int) -> Duration {
        let exponent = Double(max(0, retry - 1))
        let base = min(initialBackoff.seconds * pow(multiplier, exponent), maxBackoff.seconds)
        let jittered = base * (1 - jitter) + base * jitter * min(max(random(), 0), 1)
        return .nanoseconds(Int64((jittered * 1e9).rounded()))
    }
}

extension Duration {
    /// The duration in seconds as a floating-point number.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

/// Reads a `Retry-After` header: delay-seconds or an HTTP-date (RFC 9110 §10.2.3), or what the
/// App Store Server API sends with a 429: the UNIX time in milliseconds at which the next
/// request may be sent ("Identifying rate limits"). A number of 10^11 or more is that instant
/// (10^11 ms is 1973; 10^11 s would be over 3,000 years).
enum RetryAfter {
    static let epochMillisecondsThreshold: Int64 = 100_000_000_000

    static func parse(_ value: String?, now: Date) -> Duration? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let number = Int64(value) {
            guard number >= epochMillisecondsThreshold else { return .seconds(max(0, number)) }
            let nowMilliseconds = Int64((now.timeIntervalSince1970 * 1000).rounded(.down))
            return .milliseconds(max(0, number - nowMilliseconds))
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        let interval = max(0, date.timeIntervalSince(now))
        return .milliseconds(Int64((interval * 1000).rounded(.up)))
    }
}
