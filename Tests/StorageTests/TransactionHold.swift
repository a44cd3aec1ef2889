import Foundation
import Synchronization

@testable import Storage

/// Two PostgreSQL transactions put in one order by states, not delays: the first holds its
/// transaction open (`hold`, inside its body) until the second is seen waiting for a lock
/// (`waitsForLock`), and the test then lets it go (`release`).
/// - Note: Thread-safe: its two flags sit behind `Mutex`es.
final class TransactionHold: Sendable {
    private let held = Mutex(false)
    private let released = Mutex(false)

    /// Inside the holding transaction's body: says it holds, then waits (up to 20 s) for `release`.
    func hold() {
        held.withLock { $0 = true }
        let deadline = Date().addingTimeInterval(20)
        while !released.withLock({ $0 }), Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
    }

    /// Waits until the holding transaction holds.
    func untilHeld() async throws {
        try await JWSHeaderStorageTests.until { held.withLock { $0 } }
    }

    func release() { released.withLock { $0 = true } }

    /// Whether one session of the database at `url` waits for a lock in a statement that starts
    /// with `statement`.
    static func waitsForLock(_ url: String, statement: String) throws -> Bool {
        try PostgresAdmin.query(
            url,
            """
            SELECT COUNT(*) FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1
            """, [.text(statement + "%")]
        ).first?.integer(0) == 1
    }

    /// Waits until a session waits for a lock in `statement`, then releases the holder.
    func releaseOnceWaiting(_ url: String, statement: String) async throws {
        try await JWSHeaderStorageTests.until { try Self.waitsForLock(url, statement: statement) }
        release()
    }
}
