import Dispatch

/// A database connection confined to its own serial dispatch queue.
///
/// Blocking C calls (libsqlite3, libpq) run on that queue, never on Swift's cooperative pool;
/// callers `await` them through a continuation. A connection found broken before a job is
/// closed and opened again, so one lost PostgreSQL connection fails only the request that was
/// using it.
/// - Note: Thread-safe: `connection` is read and written only by jobs on `queue`, which is
///   serial; everything else is immutable.
final class ConnectionWorker: @unchecked Sendable {
    typealias Connector = @Sendable () throws(StoreError) -> any SQLConnection

    let label: String
    private let queue: DispatchQueue
    private let connector: Connector
    /// Touched only on `queue`.
    private var connection: (any SQLConnection)?

    init(label: String, connector: @escaping Connector) {
        self.label = label
        self.queue = DispatchQueue(label: label)
        self.connector = connector
    }

    /// Opens the connection now so that configuration errors surface at open.
    func connect() async throws {
        try await run { _ in }
    }

    /// Runs `body` with the connection on the worker's queue.
    func run<R: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> R) async throws -> R {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<R, any Error>) in
            queue.async {
                continuation.resume(with: Result { try body(try self.healthyConnection()) })
            }
        }
    }

    /// Runs `body` on the worker's queue and blocks the calling thread until it is done; for
    /// synchronous entry points (the CLI) that are not on the cooperative pool.
    func runBlocking<R>(_ body: (any SQLConnection) throws -> R) throws -> R {
        try queue.sync { try body(try healthyConnection()) }
    }

    func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                self.connection?.close()
                self.connection = nil
                continuation.resume()
            }
        }
    }

    private func healthyConnection() throws(StoreError) -> any SQLConnection {
        if let connection, connection.isHealthy { return connection }
        connection?.close()
        connection = nil
        let fresh = try connector()
        connection = fresh
        return fresh
    }
}
