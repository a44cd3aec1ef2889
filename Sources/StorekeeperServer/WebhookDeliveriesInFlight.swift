import Synchronization

/// The queues one worker holds and has not given back, per endpoint: how it bounds what it
/// sends to one endpoint at once (a queue has at most one request in flight, so a hanging
/// endpoint holds only its own slots) and in total.
/// - Note: Thread-safe: the counts sit behind a `Mutex`.
final class WebhookDeliveriesInFlight: Sendable {
    private struct Counts {
        var byEndpoint: [String: Int] = [:]
        var total = 0
    }

    private let counts = Mutex(Counts())

    /// How many more queues of `endpointId` may be claimed now, out of `perEndpoint` for one
    /// endpoint and `total` for all.
    func room(endpointId: String, perEndpoint: Int, total: Int) -> Int {
        counts.withLock { counts in
            max(0, min(perEndpoint - counts.byEndpoint[endpointId, default: 0], total - counts.total))
        }
    }

    func add(endpointId: String) {
        counts.withLock { counts in
            counts.byEndpoint[endpointId, default: 0] += 1
            counts.total += 1
        }
    }

    func finish(endpointId: String) {
        counts.withLock { counts in
            let left = counts.byEndpoint[endpointId, default: 0] - 1
            counts.byEndpoint[endpointId] = left > 0 ? left : nil
            counts.total -= 1
        }
    }
}
