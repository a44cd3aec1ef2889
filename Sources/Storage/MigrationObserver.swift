/// Who watches a migration run: told before each pending migration starts (identifier, its
/// place among the pending ones, how many are pending) and after each is applied (identifier,
/// how many are done, how many were pending), and asked between two whether to stop.
/// - Note: Immutable and `Sendable`; the closures run on the migrating connection's thread.
public struct MigrationObserver: Sendable {
    public var starting: @Sendable (_ identifier: String, _ index: Int, _ pending: Int) -> Void
    public var applied: @Sendable (_ identifier: String, _ done: Int, _ pending: Int) -> Void
    public var shouldStop: @Sendable () -> Bool

    public init(
        starting: @escaping @Sendable (_ identifier: String, _ index: Int, _ pending: Int) -> Void = { _, _, _ in },
        applied: @escaping @Sendable (_ identifier: String, _ done: Int, _ pending: Int) -> Void = { _, _, _ in },
        shouldStop: @escaping @Sendable () -> Bool = { false }
    ) {
        self.starting = starting
        self.applied = applied
        self.shouldStop = shouldStop
    }
}
