import Foundation

/// An uploaded image to show with a retention message, with its alternative text.
/// - Note: Immutable value; `Sendable`.
public struct UploadMessageImage: Sendable, Hashable, Codable {
    public var imageIdentifier: UUID?
    public var altText: String?

    public init(imageIdentifier: UUID? = nil, altText: String? = nil) {
        self.imageIdentifier = imageIdentifier
        self.altText = altText
    }
}
