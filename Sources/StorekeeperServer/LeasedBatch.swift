import AppStoreModels
import Foundation
import Storage
import StorekeeperIngestion

/// One round of a leased-batch worker (status polling, Play re-reads): claims a batch of due
/// rows under a lease, works through them one after the other and finishes each, the way every
/// such worker must on many instances.
///
/// - The claim leases its rows for `leaseMilliseconds` (`FOR UPDATE SKIP LOCKED` on PostgreSQL),
///   so no row is worked on by two instances; a server that dies mid-batch leaves its rows to
///   the next claim after the lease.
/// - Past three quarters of the lease the rest of the batch is given back unworked (finished
///   with no done instant and a retry at once): the work may be slower than planned, and a row
///   worked on after its lease ran out could be claimed by another instance meanwhile.
/// - A row whose work failed keeps its lease for `retryDelayMilliseconds`: the lease is the
///   backoff.
/// - Cancellation stops between rows and leaves the rest leased; their lease expires.
/// - Note: Immutable; `Sendable`.
struct LeasedBatch: Sendable {
    let store: any Store
    let clock: ServerClock
    let leaseMilliseconds: Int64
    let retryDelayMilliseconds: Int64

    /// Claims with `claim` (given the instant and the lease's end), works on each row with `work`
    /// (its done instant, or nil when it failed and is to be retried), and records each with
    /// `finish` (the row, its done instant or nil, the instant it may be claimed again). Returns
    /// how many rows it worked on, or nil when the claim failed.
    func run<Row: Sendable>(
        claim: @escaping @Sendable (any StoreTransaction, _ now: Timestamp) throws -> [Row],
        work: (Row) async -> Timestamp?,
        finish:
            @escaping @Sendable (any StoreTransaction, Row, _ doneAt: Timestamp?, _ retryAt: Timestamp) throws ->
            Void
    ) async -> Int? {
        let now = clock.now()
        let stopAt = now.adding(milliseconds: leaseMilliseconds * 3 / 4)
        let claimed: [Row]
        do {
            claimed = try await store.write { transaction in try claim(transaction, now) }
        } catch {
            return nil
        }
        for (index, row) in claimed.enumerated() {
            if Task.isCancelled { break }
            if clock.now() >= stopAt {
                let (rest, releasedAt) = (Array(claimed[index...]), clock.now())
                _ = try? await store.write { transaction in
                    for row in rest { try finish(transaction, row, nil, releasedAt) }
                }
                return index
            }
            let doneAt = await work(row)
            let retryAt = clock.now().adding(milliseconds: retryDelayMilliseconds)
            _ = try? await store.write { transaction in try finish(transaction, row, doneAt, retryAt) }
        }
        return claimed.count
    }
}
