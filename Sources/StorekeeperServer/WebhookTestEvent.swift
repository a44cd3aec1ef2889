import AppStoreClient
import AppStoreModels
import Foundation

/// The body of a test delivery (`POST /v1/apps/{appId}/webhooks/{endpointId}/test`): `type`
/// `TEST`, an id of its own (`evt_test_…`, also in `Storekeeper-Event-Id`), no customer. Signed
/// and sent as every delivery is, so a receiver that verifies it verifies real ones too;
/// receivers should answer 2xx and otherwise ignore it.
/// - Note: Immutable value; `Sendable`.
public struct WebhookTestEvent: Sendable, Hashable, Codable {
    public var id: String
    public var type = "TEST"
    public var appId: String
    public var endpointId: String
    public var occurredAt: Timestamp

    public init(id: String, appId: String, endpointId: String, occurredAt: Timestamp) {
        self.id = id
        self.appId = appId
        self.endpointId = endpointId
        self.occurredAt = occurredAt
    }
}

/// What an endpoint answered to a test event: its status and the start of its body, or the
/// category of the failure (`WebhookDeliveryFailure`; never the transport's own text).
/// - Note: Immutable value; `Sendable`.
public struct WebhookTestResult: Sendable, Hashable, Encodable {
    /// The most of the endpoint's answer shown back (a receiver's error message fits).
    public static let responseExcerptBytes = 1024

    public var endpointId: String
    public var eventId: String
    /// The endpoint answered 2xx.
    public var delivered: Bool
    /// The endpoint's HTTP status; absent when it did not answer.
    public var status: Int?
    /// The failure's category (`http_status_500`, `connection_failed`, `destination_refused`, …);
    /// absent when delivered.
    public var error: String?
    /// The start of the endpoint's answer (up to `responseExcerptBytes`, as UTF-8 with invalid
    /// bytes replaced); absent when it did not answer.
    public var response: String?

    public init(endpointId: String, eventId: String, outcome: Result<HTTPTransportResponse, WebhookDeliveryFailure>) {
        self.endpointId = endpointId
        self.eventId = eventId
        switch outcome {
        case .success(let answer):
            delivered = (200..<300).contains(answer.status)
            status = answer.status
            error = delivered ? nil : WebhookDeliveryFailure.httpStatus(answer.status).category
            response = String(decoding: answer.body.prefix(Self.responseExcerptBytes), as: UTF8.self)
        case .failure(let failure):
            delivered = false
            error = failure.category
        }
    }
}
