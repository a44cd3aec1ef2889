import StorekeeperIngestion

/// What one round of a periodic worker tells its loop: more may be due now (`again`), or
/// nothing is left until the next tick (`rest`).
public enum WorkerRound: Sendable, Hashable {
    case again
    case rest
}

/// The run loop every periodic background worker shares: one round, then, when the round says
/// `rest`, a sleep of `interval` on the server's clock, until the task is cancelled. A cancelled
/// sleep ends the loop at once; a round in flight when the task is cancelled finishes on its
/// own terms (each worker's round checks `Task.isCancelled` and leaves what it leased to its
/// lease), so stopping never abandons a half-written record.
/// - Note: Immutable and `Sendable`.
public struct WorkerLoop: Sendable {
    public let clock: ServerClock
    public let interval: Duration

    public init(clock: ServerClock, interval: Duration) {
        self.clock = clock
        self.interval = interval
    }

    /// Runs `round` until the task is cancelled.
    public func run(_ round: () async -> WorkerRound) async {
        while !Task.isCancelled {
            if await round() == .rest {
                do { try await clock.sleep(interval) } catch { return }
            }
        }
    }
}

/// A worker the server runs in the background for as long as it serves.
/// - Note: Implementations are `Sendable`; one `run()` per process.
public protocol BackgroundWorker: Sendable {
    /// Runs until the task is cancelled, and returns once what the worker held is given back.
    func run() async
}

/// A background worker made of rounds paced by a `WorkerLoop`: `run()` is the loop over
/// `round()`, which tests call directly.
public protocol PeriodicWorker: BackgroundWorker {
    var loop: WorkerLoop { get }
    /// One round at the clock's now.
    func round() async -> WorkerRound
}

extension PeriodicWorker {
    public func run() async {
        await loop.run { await round() }
    }
}
