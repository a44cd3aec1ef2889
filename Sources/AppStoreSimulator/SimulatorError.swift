import AppStoreModels

/// Why the simulator refused a request or an action. One error type for the module with a
/// stable `code`; the HTTP edge maps it to Apple's error payload (`apiError`) or to a 4xx of
/// the admin API.
/// - Note: Immutable value; `Sendable`.
public struct SimulatorError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        case unknownApp = "simulator.unknownApp"
        case unknownProduct = "simulator.unknownProduct"
        case unknownCustomer = "simulator.unknownCustomer"
        case unknownTransaction = "simulator.unknownTransaction"
        case unknownSubscription = "simulator.unknownSubscription"
        case offerNotAvailable = "simulator.offerNotAvailable"
        case invalidAction = "simulator.invalidAction"
        case alreadySubscribed = "simulator.alreadySubscribed"
        /// An App Store Server API refusal: `apiError` says which.
        case appStoreAPI = "simulator.appStoreAPI"
        case unauthenticated = "simulator.unauthenticated"
        case rateLimited = "simulator.rateLimited"
        case signingFailed = "simulator.signingFailed"
        case timeTravelUnavailable = "simulator.timeTravelUnavailable"
        /// The simulated App Store is in an outage (`setOutage`): 503 to every API call.
        case outage = "simulator.outage"
    }

    public let code: Code
    public let message: String
    /// Apple's error code for Server API refusals, kept raw so any code Apple uses can be sent.
    public let apiErrorCode: Int64?

    /// For `rateLimited`: seconds until a request would be accepted (`Retry-After`).
    public let retryAfterSeconds: Int64?

    public init(_ code: Code, _ message: String, apiErrorCode: Int64? = nil, retryAfterSeconds: Int64? = nil) {
        self.code = code
        self.message = message
        self.apiErrorCode = apiErrorCode
        self.retryAfterSeconds = retryAfterSeconds
    }

    public var apiError: APIError? { apiErrorCode.flatMap(APIError.init(rawValue:)) }

    /// A Server API refusal with Apple's code and a message like Apple's.
    static func api(_ error: APIError, _ message: String) -> SimulatorError {
        SimulatorError(.appStoreAPI, message, apiErrorCode: error.rawValue)
    }

    /// A Server API refusal with a code `APIError` does not list.
    static func api(code: Int64, _ message: String) -> SimulatorError {
        SimulatorError(.appStoreAPI, message, apiErrorCode: code)
    }

    /// The HTTP status Apple answers with: the first three digits of the error code.
    var httpStatus: Int {
        // An outage is the gateway's 503, whatever Apple's code (which would say 500).
        if code == .outage { return 503 }
        if let apiErrorCode { return Int(apiErrorCode / 10_000) }
        switch code {
        case .unknownApp, .unknownProduct, .unknownCustomer, .unknownTransaction, .unknownSubscription: return 404
        case .unauthenticated: return 401
        case .rateLimited: return 429
        case .signingFailed: return 500
        default: return 400
        }
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
