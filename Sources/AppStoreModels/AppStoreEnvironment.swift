/// The server environment, sandbox or production (Apple: `environment`).
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum AppStoreEnvironment: String, Sendable, Hashable, Codable, CaseIterable {
    case sandbox = "Sandbox"
    case production = "Production"
    case xcode = "Xcode"
    case localTesting = "LocalTesting"
}
