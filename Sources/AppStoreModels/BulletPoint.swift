import Foundation

/// One bullet of a retention message: its text and the uploaded image used as its bullet.
/// - Note: Immutable value; `Sendable`.
public struct BulletPoint: Sendable, Hashable, Codable {
    public var text: String?
    public var imageIdentifier: UUID?
    public var altText: String?

    public init(text: String? = nil, imageIdentifier: UUID? = nil, altText: String? = nil) {
        self.text = text
        self.imageIdentifier = imageIdentifier
        self.altText = altText
    }
}
