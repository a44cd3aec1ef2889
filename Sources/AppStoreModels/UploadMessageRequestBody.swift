/// The body of Upload Message (Retention Messaging API): header and body text, an optional image
/// and bullet points.
///
/// Apple's limits (header 66, body 144 characters, 5 bullet points) are enforced by Apple's
/// server, which answers `HeaderTooLongError` / `BodyTooLongError`; decoding does not reject, so
/// the simulator can reproduce those answers.
/// - Note: Immutable value; `Sendable`.
public struct UploadMessageRequestBody: Sendable, Hashable, Codable {
    public static let maximumHeaderLength = 66
    public static let maximumBodyLength = 144
    public static let maximumBulletPointCount = 5

    public var header: String?
    public var body: String?
    public var image: UploadMessageImage?
    public var bulletPoints: [BulletPoint]?
    public var headerPosition: RawEnum<HeaderPosition>?

    public init(
        header: String? = nil, body: String? = nil, image: UploadMessageImage? = nil,
        bulletPoints: [BulletPoint]? = nil,
        headerPosition: RawEnum<HeaderPosition>? = nil
    ) {
        self.header = header
        self.body = body
        self.image = image
        self.bulletPoints = bulletPoints
        self.headerPosition = headerPosition
    }
}
