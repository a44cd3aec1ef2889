/// At most `limit` requests of one app in flight at once; further requests wait in FIFO order.
///
/// Apple rate-limits per app and endpoint, and a burst (a reconciliation sweep, a replay)
/// would otherwise open hundreds of connections and collect 429s. One limiter belongs to one
/// app's client (the sandbox fallback of that client shares it). Waiting is not cancellable:
/// a permit frees as soon as a running request ends, which is bounded by the request timeout.
/// Permits are held for one HTTP exchange only, never across a backoff pause.
/// - Note: An actor; safe from any task.
public actor ConcurrencyLimiter {
    public nonisolated let limit: Int
    private var inFlight = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []
    /// The highest number of permits held at once (for tests and metrics).
    public private(set) var peakInFlight = 0

    public init(limit: Int) {
        self.limit = max(1, limit)
    }

    public func acquire() async {
        if inFlight < limit {
            inFlight += 1
        } else {
            // `release()` hands its permit straight to us, so `inFlight` already counts it.
            await withCheckedContinuation { waiters.append($0) }
        }
        peakInFlight = max(peakInFlight, inFlight)
    }

    public func release() {
        if waiters.isEmpty {
            inFlight = max(0, inFlight - 1)
        } else {
            waiters.removeFirst().resume()
        }
    }
}
