import Foundation

/// A text retention message to show, by the identifier it was uploaded under.
/// - Note: Immutable value; `Sendable`.
public struct Message: Sendable, Hashable, Codable {
    public var messageIdentifier: UUID?

    public init(messageIdentifier: UUID? = nil) { self.messageIdentifier = messageIdentifier }
}
