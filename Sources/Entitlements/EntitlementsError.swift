/// Why a payload could not become a fact for the engine. The `code` is stable for logs,
/// metrics and tests; the HTTP status is chosen at the edge.
/// - Note: Immutable value; `Sendable`.
public struct EntitlementsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Stable rule codes.
    public enum Code: String, Sendable, Hashable {
        /// A field the engine cannot work without is absent (`transactionId`, `signedDate`, …).
        case missingField = "fact.missingField"
        /// A field has a value the engine cannot interpret.
        case invalidValue = "fact.invalidValue"
    }

    public let code: Code
    /// The payload field concerned (`signedDate`).
    public let field: String
    /// The payload kind (`transaction`, `renewalInfo`, `notification`, `legacyTransaction`).
    public let payload: String

    public init(code: Code, field: String, payload: String) {
        self.code = code
        self.field = field
        self.payload = payload
    }

    public var description: String {
        switch code {
        case .missingField: return "\(code.rawValue): \(payload) lacks '\(field)'"
        case .invalidValue: return "\(code.rawValue): \(payload) has an unusable '\(field)'"
        }
    }
}
