/// The body of Configure Realtime URL: where Apple sends realtime retention requests.
/// Apple spells the key `realtimeURL`.
/// - Note: Immutable value; `Sendable`.
public struct RealtimeUrlRequest: Sendable, Hashable, Codable {
    public var realtimeURL: String?

    public init(realtimeURL: String? = nil) { self.realtimeURL = realtimeURL }
}
