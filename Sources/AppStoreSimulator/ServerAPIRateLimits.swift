import AppStoreModels

/// The per-app, per-endpoint limits the simulator's Server API enforces, by default Apple's
/// documented ones ("Identifying rate limits", App Store Server API documentation: requests
/// per second in Production, a tenth in Sandbox). `percent` scales every limit (100: Apple's;
/// 2000: twenty times Apple's, for a test or a benchmark that must not wait on Apple's pace);
/// `nil` lifts them.
///
/// Apple states its limits per second but measures them over a longer window, so a short burst
/// passes: each app and endpoint holds a bucket of `burstSeconds` worth of requests, refilled
/// at the rate (a GCRA). A sustained overrun is refused with 429, Apple's
/// `RateLimitExceededError` and a `Retry-After` in seconds. Time is real time (the token
/// clock), never the store's accelerated clock: Apple's limits do not speed up with a scenario.
///
/// The Retention Messaging API is not limited here (its limits are not in that table).
/// - Note: Immutable value; `Sendable`.
public struct ServerAPIRateLimits: Sendable, Hashable, Codable {
    /// Percent of Apple's documented limits; `nil`: no limit.
    public var percent: Double?
    /// How many seconds' worth of requests may arrive at once.
    public var burstSeconds: Double

    public init(percent: Double?, burstSeconds: Double = 60) {
        self.percent = percent
        self.burstSeconds = burstSeconds
    }

    private enum CodingKeys: String, CodingKey { case percent, burstSeconds }

    /// `{"percent": 2000}`, `{"percent": null}` (no limit), `burstSeconds` optional (60).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        percent = try container.decodeIfPresent(Double.self, forKey: .percent)
        burstSeconds = try container.decodeIfPresent(Double.self, forKey: .burstSeconds) ?? 60
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(percent, forKey: .percent)
        try container.encode(burstSeconds, forKey: .burstSeconds)
    }

    /// Whether the values are usable: a positive percent (at most 1,000,000) and a burst of
    /// 0.001 to 3600 seconds.
    public var isValid: Bool {
        (percent.map { $0 > 0 && $0 <= 1_000_000 } ?? true) && burstSeconds >= 0.001 && burstSeconds <= 3600
    }

    /// Apple's documented limits, as Apple applies them.
    public static let apple = ServerAPIRateLimits(percent: 100)
    /// No limit at all.
    public static let unlimited = ServerAPIRateLimits(percent: nil)

    /// Apple's documented Production rate of a route (`"GET /inApps/v1/subscriptions/{transactionId}"`),
    /// in requests per second; `nil` for a route this table does not limit.
    public static func documentedProductionRate(route: String) -> Double? {
        switch route {
        case "GET /inApps/v1/transactions/{transactionId}", "GET /inApps/v1/history/{transactionId}",
            "GET /inApps/v2/history/{transactionId}", "GET /inApps/v1/subscriptions/{transactionId}",
            "GET /inApps/v1/transactions/appTransactions/{transactionId}",
            "POST /inApps/v1/transactions/{transactionId}/finish",
            "PUT /inApps/v1/transactions/consumption/{transactionId}",
            "PUT /inApps/v2/transactions/consumption/{transactionId}", "POST /inApps/v1/notifications/history":
            return 50
        case "PUT /inApps/v1/subscriptions/extend/{originalTransactionId}",
            "PUT /inApps/v1/transactions/{originalTransactionId}/appAccountToken":
            return 20
        case "GET /inApps/v1/lookup/{orderId}", "GET /inApps/v2/refund/lookup/{transactionId}":
            return 10
        case _ where route.contains("/inApps/v1/messaging/"):
            return nil
        default:
            // Mass extension, test notifications, and anything Apple lists no figure for.
            return 1
        }
    }

    /// The rate this configuration allows for `route` in `environment`, requests per second;
    /// `nil`: not limited.
    public func rate(route: String, environment: AppStoreEnvironment) -> Double? {
        guard let percent, let documented = Self.documentedProductionRate(route: route) else { return nil }
        let environmentShare = environment == .production ? 1.0 : 0.1
        return max(documented * environmentShare * percent / 100, 0.000_001)
    }
}

/// The GCRA state behind `ServerAPIRateLimits`: per app and route, the theoretical arrival time
/// of the next request, in milliseconds of the token clock.
/// - Note: A value; not thread-safe by itself (the simulator actor holds it).
struct ServerAPIRateState: Sendable {
    private var theoreticalArrival: [String: Double] = [:]

    /// Admits one request for `key` at `now` (ms) under `rate` (per second) and `burstSeconds`;
    /// returns `nil` when admitted, else the whole seconds until one would be.
    mutating func admit(key: String, now: Double, rate: Double, burstSeconds: Double) -> Int64? {
        let interval = 1000 / rate
        // At least one request may always go at once, whatever the rate.
        let tolerance = max(burstSeconds * 1000 - interval, 0)
        var arrival = max(theoreticalArrival[key] ?? now, now)
        // Further ahead than any admitted request can put it: the clock went back (a test
        // travelling in time); start afresh rather than refuse until the clock catches up.
        if arrival - now > tolerance + interval { arrival = now }
        guard arrival - now <= tolerance else {
            return max(1, Int64(((arrival - now - tolerance) / 1000).rounded(.up)))
        }
        theoreticalArrival[key] = arrival + interval
        return nil
    }
}
