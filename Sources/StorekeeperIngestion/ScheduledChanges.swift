import AppStoreModels
import Entitlements
import Storage

/// Changes that time alone makes: a customer whose access ends (or begins) at a known instant
/// (an expiry, a billing grace period's end, a non-renewing period's end or start) is
/// re-evaluated at that instant, and the resulting state, events and webhook outbox rows are
/// committed exactly as for a notification (`CustomerStateUpdater.update`). The instant is the
/// state's `valid_until` (`CustomerInfo.nextScheduledChange`), saved with every state.
///
/// Events are dated at the instant of the change (Apple's dates), not at the re-evaluation,
/// and their ids come from their cause: when Apple's notification for the same change
/// arrives later, it adds its facts without a second event.
/// - Note: Stateless; `commitDue` runs one store transaction.
public enum ScheduledChanges {
    /// What one pass did.
    /// - Note: Immutable value; `Sendable`.
    public struct Pass: Sendable, Hashable {
        /// Customer states claimed and re-evaluated.
        public var reevaluated = 0
        /// Lifecycle events appended (and queued for webhooks).
        public var events = 0
        /// States that could not be re-evaluated (kept, retried after the back-off).
        public var failed = 0

        public init() {}
    }

    /// Claims up to `limit` due states and re-evaluates each at `now`, in one transaction: a
    /// crash before the commit leaves them due, so each due instant is processed once it
    /// commits. A state that fails for a reason other than a retryable database error is
    /// postponed by `retryDelayMilliseconds` so that it cannot hold back the others.
    public static func commitDue(
        in store: any Store, now: Timestamp, limit: Int, retryDelayMilliseconds: Int64 = 60_000
    ) async throws(IngestionError) -> Pass {
        do {
            return try await store.write { transaction in
                try commitDue(in: transaction, now: now, limit: limit, retryDelayMilliseconds: retryDelayMilliseconds)
            }
        } catch {
            throw IngestionError.store(error)
        }
    }

    /// `commitDue` inside the caller's transaction.
    public static func commitDue(
        in transaction: any StoreTransaction, now: Timestamp, limit: Int, retryDelayMilliseconds: Int64 = 60_000
    ) throws -> Pass {
        var pass = Pass()
        for state in try transaction.claimDueCustomerStates(now: now, limit: limit) {
            do {
                let outcome = try transaction.withSavepoint {
                    let customer = try transaction.lockCustomer(id: state.customerId)
                    return try CustomerStateUpdater.update(
                        customer: customer, environment: state.environment, in: transaction, now: now)
                }
                pass.reevaluated += 1
                pass.events += outcome.newEvents.count
            } catch let error as StoreError where error.isRetryable {
                throw error
            } catch {
                // The database may have ended the whole transaction (SQLite, after some I/O and
                // memory errors): nothing may run outside it.
                try transaction.requireOpen()
                pass.failed += 1
                try transaction.postponeCustomerState(
                    customerId: state.customerId, environment: state.environment,
                    until: now.adding(milliseconds: retryDelayMilliseconds))
            }
        }
        return pass
    }
}
