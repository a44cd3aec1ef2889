/// The JSON body of an App Store Server API error: `{"errorCode": 4040010, "errorMessage": "…"}`.
///
/// `errorCode` keeps codes Apple adds later: `errorCode?.value` is `nil`, the raw number stays.
/// - Note: Immutable value; `Sendable`.
public struct ErrorPayload: Sendable, Hashable, Codable {
    public var errorCode: RawEnum<APIError>?
    public var errorMessage: String?

    public init(errorCode: RawEnum<APIError>? = nil, errorMessage: String? = nil) {
        self.errorCode = errorCode
        self.errorMessage = errorMessage
    }

    /// Whether Apple documents this error as worth retrying (see `APIError.isRetryable`).
    public var isRetryable: Bool { errorCode?.value?.isRetryable ?? false }
}
