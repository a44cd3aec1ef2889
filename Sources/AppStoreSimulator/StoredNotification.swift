import AppStoreModels
import Foundation

/// One V2 notification as Apple's notification history keeps it: the signed payload, its send
/// attempts, and when the next attempt is due.
struct StoredNotification: Sendable {
    var uuid: String
    var bundleId: String
    var customerId: String?
    var type: NotificationTypeV2
    var subtype: Subtype?
    var signedPayload: String
    var createdAt: Timestamp
    var originalTransactionId: String?
    var attempts: [SendAttemptItem] = []
    /// nil once delivered, given up, lost, or when the app has no notification URL.
    var nextAttemptAt: Timestamp?
    var inFlight = false
    var lost = false
    var testNotificationToken: String?
    var sequence: Int

    var succeeded: Bool { attempts.contains { $0.sendAttemptResult == .success } }
}

/// A V1 notification on its way (V1 has no history; it is retried on the same schedule).
struct V1Delivery: Sendable {
    var url: URL
    var body: Data
    var type: NotificationTypeV1
    var failedAttempts = 0
    var nextAttemptAt: Timestamp?
    var inFlight = false
    var delivered = false
}

/// A notification the simulator produced, for tests and the admin API.
/// - Note: Immutable value; `Sendable`.
public struct SimulatorNotification: Sendable, Hashable, Codable {
    public var notificationUUID: String
    public var bundleId: String
    public var customer: String?
    public var notificationType: String
    public var subtype: String?
    public var signedPayload: String
    public var sendAttempts: [SendAttemptItem]
    public var lost: Bool
}

/// A limit on Server API calls per app: at most `requests` in any `seconds`-long window,
/// measured on the simulator's clock. Beyond it: 429 with `Retry-After`.
/// - Note: Immutable value; `Sendable`.
public struct RateLimit: Sendable, Hashable, Codable {
    public var requests: Int
    public var seconds: Double

    public init(requests: Int, seconds: Double) {
        self.requests = requests
        self.seconds = seconds
    }
}
