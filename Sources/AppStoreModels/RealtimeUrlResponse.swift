/// The body of Get Realtime URL: the configured endpoint for realtime retention requests.
/// - Note: Immutable value; `Sendable`.
public struct RealtimeUrlResponse: Sendable, Hashable, Codable {
    public var realtimeURL: String?

    public init(realtimeURL: String? = nil) { self.realtimeURL = realtimeURL }
}
