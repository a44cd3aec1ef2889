import Foundation

/// The body of Set App Account Token: the UUID to associate with a transaction.
/// - Note: Immutable value; `Sendable`.
public struct UpdateAppAccountTokenRequest: Sendable, Hashable, Codable {
    public var appAccountToken: UUID?

    public init(appAccountToken: UUID? = nil) { self.appAccountToken = appAccountToken }
}
