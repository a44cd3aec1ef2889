import Storage
import Synchronization

/// The deliveries one worker has claimed and not yet finished, per endpoint: how it bounds what
/// it sends to one endpoint at once (a hanging endpoint holds only its own slots) and in total.
/// - Note: Thread-safe: the counts sit behind a `Mutex`.
final class WebhookDeliveriesInFlight: Sendable {
    private struct Counts {
        var byEndpoint: [String: Int] = [:]
        var total = 0
    }

    private let counts = Mutex(Counts())

    /// How many more deliveries of `endpointId` may be claimed now, out of `perEndpoint` for one
    /// endpoint and `total` for all.
    func room(endpointId: String, perEndpoint: Int, total: Int) -> Int {
        counts.withLock { counts in
            max(0, min(perEndpoint - counts.byEndpoint[endpointId, default: 0], total - counts.total))
        }
    }

    func add(_ deliveries: [OutboxDelivery]) {
        counts.withLock { counts in
            for delivery in deliveries { counts.byEndpoint[delivery.endpoint.id, default: 0] += 1 }
            counts.total += deliveries.count
        }
    }

    func finish(_ delivery: OutboxDelivery) {
        counts.withLock { counts in
            let left = counts.byEndpoint[delivery.endpoint.id, default: 0] - 1
            counts.byEndpoint[delivery.endpoint.id] = left > 0 ? left : nil
            counts.total -= 1
        }
    }
}
