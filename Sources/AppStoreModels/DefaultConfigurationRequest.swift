import Foundation

/// The body of Configure Default Message: the message shown when your realtime endpoint does not
/// answer (per product and locale, given in the URL).
/// - Note: Immutable value; `Sendable`.
public struct DefaultConfigurationRequest: Sendable, Hashable, Codable {
    public var messageIdentifier: UUID?

    public init(messageIdentifier: UUID? = nil) { self.messageIdentifier = messageIdentifier }
}
