import AppStoreModels
import Entitlements
import Storage

/// Merging two app user ids: the customer known as the alias hands its purchases to the
/// target, is re-evaluated without them, and the alias names the target from then on (an app
/// that logs an anonymous user in calls this once).
/// - Note: Immutable and `Sendable`.
public struct CustomerAliases: Sendable {
    let writer: IngestionWriter
    let clock: ServerClock

    public init(writer: IngestionWriter, clock: ServerClock) {
        self.writer = writer
        self.clock = clock
    }

    /// Merges `alias` into `appUserId` and returns the target's state in the app's default
    /// environment. Identifiers are checked by the caller.
    public func merge(app: AppRuntime, appUserId: String, alias: String) async throws(IngestionError)
        -> CustomerInfo
    {
        guard alias != appUserId else {
            throw IngestionError.invalidBody("A customer cannot be its own alias.")
        }
        let environment = try app.environment(nil)
        let batch = FactBatch(
            appId: app.id, receivedAt: clock.now(), environment: environment,
            ownership: .merge(appUserId: appUserId, alias: alias))
        let commit = try await writer.commit(batch, operation: "alias")
        return commit.customerInfo
            ?? CustomerInfo(customerId: appUserId, environment: environment, evaluatedAt: batch.receivedAt)
    }
}
