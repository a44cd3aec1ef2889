import Foundation

/// A value guarded by a lock: the module's one primitive for shared mutable state.
///
/// `Synchronization.Mutex` would do the same job; this module may import only Foundation and
/// CMicroHTTPD, so it wraps `NSLock`.
/// - Note: Thread-safe; the value is only reachable inside `withLock`.
final class Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable is safe: `value` is private and every read and write happens
    // inside `withLock`, which holds `lock` for the whole access.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
