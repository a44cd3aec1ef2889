import Foundation

/// A switch-plan retention message: the message to show and the product to offer instead.
/// - Note: Immutable value; `Sendable`.
public struct AlternateProduct: Sendable, Hashable, Codable {
    public var messageIdentifier: UUID?
    public var productId: String?

    public init(messageIdentifier: UUID? = nil, productId: String? = nil) {
        self.messageIdentifier = messageIdentifier
        self.productId = productId
    }
}
