/// Why bytes could not be read as one of Google's payloads. `code` is stable; `path` names the
/// field (`message.data`, `lineItems[0].expiryTime`) so an operator sees what was wrong, and the
/// description never repeats the payload itself.
/// - Note: Immutable value; `Sendable`.
public struct GooglePlayModelError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        case tooLarge = "play.model.tooLarge"
        case notJSON = "play.model.notJSON"
        case wrongType = "play.model.wrongType"
        case missingField = "play.model.missingField"
        case invalidValue = "play.model.invalidValue"
        /// `message.data` of a push is not base64.
        case dataNotBase64 = "play.model.dataNotBase64"
        /// A developer notification names none of the notification kinds, or more than one.
        case notificationKind = "play.model.notificationKind"
    }

    public let code: Code
    /// The field path inside the payload, empty for the payload as a whole.
    public let path: String
    /// The Google type being read (`DeveloperNotification`).
    public let type: String
    /// Extra words for `tooLarge` (sizes) and `notificationKind` (what was found).
    public let detail: String

    public init(_ code: Code, path: String = "", type: String, detail: String = "") {
        self.code = code
        self.path = path
        self.type = type
        self.detail = detail
    }

    public var description: String {
        let field = path.isEmpty ? "" : " field '\(path)'"
        let text: String
        switch code {
        case .tooLarge: text = "body is too large"
        case .notJSON: text = "body is not a JSON object"
        case .wrongType: text = "\(field.dropFirst()) has the wrong JSON type"
        case .missingField: text = "required\(field) is missing"
        case .invalidValue: text = "\(field.dropFirst()) has an invalid value"
        case .dataNotBase64: text = "\(field.dropFirst()) is not base64"
        case .notificationKind: text = "the notification must carry exactly one notification kind"
        }
        return "\(code.rawValue) \(type): \(text)" + (detail.isEmpty ? "" : " (\(detail))")
    }
}
