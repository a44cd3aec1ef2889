import Foundation

/// One uploaded image: identifier, review state and size class.
/// - Note: Immutable value; `Sendable`.
public struct GetImageListResponseItem: Sendable, Hashable, Codable {
    public var imageIdentifier: UUID?
    public var imageState: RawEnum<ImageState>?
    public var imageSize: RawEnum<ImageSize>?

    public init(
        imageIdentifier: UUID? = nil, imageState: RawEnum<ImageState>? = nil,
        imageSize: RawEnum<ImageSize>? = nil
    ) {
        self.imageIdentifier = imageIdentifier
        self.imageState = imageState
        self.imageSize = imageSize
    }
}
