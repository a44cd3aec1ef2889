/// The body the App Store posts for a Server Notification V2: `{"signedPayload": "<JWS>"}`.
/// - Note: Immutable value; `Sendable`.
public struct ResponseBodyV2: Sendable, Hashable, Codable {
    public var signedPayload: String?
    public init(signedPayload: String? = nil) { self.signedPayload = signedPayload }
}
