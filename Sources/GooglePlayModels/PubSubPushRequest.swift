import Foundation

/// The body Cloud Pub/Sub POSTs to a push endpoint:
/// `{"message": {"data", "messageId", "publishTime", "attributes"}, "subscription"}`.
///
/// `message.data` is base64 (standard alphabet, padded) of the publisher's bytes; for Google
/// Play's real-time developer notifications those bytes are a `DeveloperNotification`.
/// - Note: Immutable value; `Sendable`.
public struct PubSubPushRequest: Sendable, Hashable, Codable {
    public var message: PubSubMessage
    /// `projects/{project}/subscriptions/{name}`.
    public var subscription: String?

    public init(message: PubSubMessage, subscription: String? = nil) {
        self.message = message
        self.subscription = subscription
    }

    /// A push body is untrusted input: Pub/Sub caps a message at 10 MB, but a Play notification
    /// is well under 1 KiB, so 64 KiB is generous.
    public static let maximumBytes = 64 * 1024

    /// Decodes a push body, refusing more than `maximumBytes` before parsing.
    public static func decode(_ body: Data, maximumBytes: Int = maximumBytes) throws(GooglePlayModelError)
        -> PubSubPushRequest
    {
        try GooglePlayJSON.decode(PubSubPushRequest.self, from: body, maximumBytes: maximumBytes)
    }

    /// The developer notification inside `message.data`.
    public func developerNotification() throws(GooglePlayModelError) -> DeveloperNotification {
        let bytes = try message.decodedData()
        return try DeveloperNotification.decode(bytes)
    }
}

/// One Pub/Sub message as pushed. `publishTime` is RFC 3339 (kept as text: Pub/Sub writes
/// nanoseconds); `messageId` is unique per message within a topic and is the idempotency key.
/// - Note: Immutable value; `Sendable`.
public struct PubSubMessage: Sendable, Hashable, Codable {
    /// Base64 of the published bytes (absent for an attributes-only message).
    public var data: String?
    public var messageId: String
    public var publishTime: String?
    public var attributes: [String: String]?
    public var orderingKey: String?

    public init(
        data: String?, messageId: String, publishTime: String? = nil, attributes: [String: String]? = nil,
        orderingKey: String? = nil
    ) {
        self.data = data
        self.messageId = messageId
        self.publishTime = publishTime
        self.attributes = attributes
        self.orderingKey = orderingKey
    }

    /// A message carrying `bytes` as its base64 `data`.
    public init(bytes: Data, messageId: String, publishTime: String? = nil) {
        self.init(data: bytes.base64EncodedString(), messageId: messageId, publishTime: publishTime)
    }

    /// The bytes of `data`; `dataNotBase64` when it is missing or not base64.
    public func decodedData() throws(GooglePlayModelError) -> Data {
        guard let data else {
            throw GooglePlayModelError(.missingField, path: "message.data", type: "PubSubPushRequest")
        }
        guard let bytes = Data(base64Encoded: data) else {
            throw GooglePlayModelError(.dataNotBase64, path: "message.data", type: "PubSubPushRequest")
        }
        return bytes
    }
}
