import Foundation

/// The body of Get Default Message: the message configured as the default.
/// - Note: Immutable value; `Sendable`.
public struct DefaultConfigurationResponse: Sendable, Hashable, Codable {
    public var messageIdentifier: UUID?

    public init(messageIdentifier: UUID? = nil) { self.messageIdentifier = messageIdentifier }
}
