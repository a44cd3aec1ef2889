/// Who watches a migration run: told after each migration is applied (identifier, how many of
/// the pending ones are done, how many were pending), and asked between two whether to stop.
/// - Note: Immutable and `Sendable`; the closures run on the migrating connection's thread.
public struct MigrationObserver: Sendable {
    public var applied: @Sendable (_ identifier: String, _ done: Int, _ pending: Int) -> Void
    public var shouldStop: @Sendable () -> Bool

    public init(
        applied: @escaping @Sendable (_ identifier: String, _ done: Int, _ pending: Int) -> Void = { _, _, _ in },
        shouldStop: @escaping @Sendable () -> Bool = { false }
    ) {
        self.applied = applied
        self.shouldStop = shouldStop
    }
}
