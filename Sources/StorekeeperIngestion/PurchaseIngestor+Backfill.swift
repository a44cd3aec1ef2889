import AppStoreModels
import AppStoreTrust
import Entitlements
import Storage

extension PurchaseIngestor {
    /// What importing one line of a receipt backfill did.
    public enum BackfillOutcome: String, Sendable, Hashable {
        /// The line's facts were committed for its user.
        case imported
        /// The line was imported before (an earlier run, or the same line earlier in the file).
        case duplicate
    }

    /// Imports one verifyReceipt-era receipt for `appUserId`: the receipt is verified locally
    /// (signature to the app's roots, the app's bundle id), then each of its original
    /// transactions is completed from the App Store Server API (statuses and history), or,
    /// when the app has no App Store Connect key, the receipt goes to verifyReceipt with the
    /// app's shared secret. Everything is committed through the one commit path with the line's
    /// mark, so a line is imported once however often it is run.
    ///
    /// Ownership never moves: an export line is old news dated now, and must not take a
    /// purchase from the customer who owns it live (nor two lines carrying one Apple account's
    /// receipt pass it back and forth), so `transferToNewest` is applied as `keepWithFirst`.
    ///
    /// `environment`: where to ask Apple; by default the receipt's own (its receipt type).
    public func backfillReceipt(
        app: AppRuntime, appUserId: String, receipt: String, lineDigest: String,
        environment requested: AppStoreEnvironment?
    ) async throws(IngestionError) -> BackfillOutcome {
        let parsed = try verifyLocally(app: app, receipt: receipt)
        let mark = FactBatch.BackfillLineMark(digest: lineDigest, appUserId: appUserId)
        let record = FactBatch.Receipt(receiptData: receipt, responseBody: nil)
        let environment = try app.environment(
            requested ?? (parsed.receiptType == "ProductionSandbox" ? .sandbox : .production))
        let commit: FactCommit
        if app.settings.appStoreConnect != nil {
            guard let connection = try app.connection(environment, required: true) else {
                throw app.missingAppStoreKey
            }
            // A receipt is one Apple account's: one statuses and one history call cover it.
            let facts = try await read(
                .receipt(transactionIds: Self.transactionPerOriginal(parsed)), app: app, environment: environment,
                via: connection)
            commit = try await commitFacts(
                facts, app: app, appUserId: appUserId, environment: environment, receipt: record,
                backfillLine: mark, policy: Self.backfillPolicy(app))
        } else {
            // No key: the legacy endpoint is the only way to Apple, through the shared secret.
            guard app.record.sharedSecret != nil,
                let connection = try app.connection(environment, required: true)
            else { throw IngestionError.appStoreNotConfigured }
            let answer = try await verifyReceipt(receipt, app: app, via: connection)
            commit = try await commitFacts(
                legacyFacts(answer.response, environment: answer.environment), app: app, appUserId: appUserId,
                environment: answer.environment,
                receipt: FactBatch.Receipt(
                    receiptData: receipt,
                    responseBody: AppStoreJSON.encodeText(answer.response)),
                backfillLine: mark, policy: Self.backfillPolicy(app))
        }
        return commit.outcome == .duplicate ? .duplicate : .imported
    }

    /// The app's transfer policy, except that a backfill never transfers (see `backfillReceipt`).
    static func backfillPolicy(_ app: AppRuntime) -> TransferPolicy {
        app.settings.transferPolicy == .transferToNewest ? .keepWithFirst : app.settings.transferPolicy
    }
}
