/// The environment of a Server Notification V1; unlike the V2 environment, production is spelled `PROD`.
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum NotificationEnvironmentV1: String, Sendable, Hashable, Codable, CaseIterable {
    case sandbox = "Sandbox"
    case production = "PROD"
}

extension NotificationEnvironmentV1 {
    /// The same environment in the vocabulary of the V2 payloads and the Server API.
    public var appStoreEnvironment: AppStoreEnvironment {
        switch self {
        case .sandbox: return .sandbox
        case .production: return .production
        }
    }
}
