/// The body of Get Image List: every retention-messaging image of the app and its review state.
/// - Note: Immutable value; `Sendable`.
public struct GetImageListResponse: Sendable, Hashable, Codable {
    public var imageIdentifiers: [GetImageListResponseItem]?

    public init(imageIdentifiers: [GetImageListResponseItem]? = nil) {
        self.imageIdentifiers = imageIdentifiers
    }
}
