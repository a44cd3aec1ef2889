import AppStoreModels
import Foundation
import Synchronization

/// Remembers chains that passed validation (and OCSP, when online checks are on), keyed by a
/// digest of the JWS header that carried them (algorithm and `x5c`) and the trusted roots, so a stream of payloads from the same
/// leaf costs one ECDSA verification each instead of a full path validation.
///
/// Bounded in entries (least recently verified evicted first) and in age: an entry is used
/// only while younger than `maximumAge` by the verifier's clock, as Apple's library does
/// for its 15-minute cache.
/// - Note: Thread-safe: the table sits behind a `Mutex`.
public final class VerifiedChainCache: Sendable {
    public let capacity: Int
    public let maximumAge: Int64

    private struct Entry {
        let chain: VerifiedChain
        let storedAt: Timestamp
        let onlineChecked: Bool
    }

    private let entries = Mutex<[[UInt8]: Entry]>([:])

    /// - Parameters:
    ///   - capacity: number of distinct chains kept (Apple rotates leaves rarely; 32 is plenty).
    ///   - maximumAgeSeconds: how long a validation is trusted before it is redone.
    public init(capacity: Int = 32, maximumAgeSeconds: Int64 = 15 * 60) {
        self.capacity = max(1, capacity)
        self.maximumAge = maximumAgeSeconds * 1000
    }

    /// The protected header text names the algorithm and the certificates; with the roots'
    /// digest it identifies one validation outcome.
    static func key(header: ArraySlice<UInt8>, roots: [UInt8]) -> [UInt8] {
        Digest.sha256(roots + header)
    }

    /// A cached chain usable at `instant`, or nil.
    func chain(for key: [UInt8], at instant: Timestamp, now: Timestamp, requireOnline: Bool) -> VerifiedChain? {
        entries.withLock { table in
            guard let entry = table[key] else { return nil }
            guard now.millisecondsSince1970 - entry.storedAt.millisecondsSince1970 < maximumAge,
                now >= entry.storedAt
            else {
                table[key] = nil
                return nil
            }
            guard !requireOnline || entry.onlineChecked,
                entry.chain.validFrom <= instant, instant <= entry.chain.validUntil
            else { return nil }
            return entry.chain
        }
    }

    func store(_ chain: VerifiedChain, for key: [UInt8], now: Timestamp, onlineChecked: Bool) {
        entries.withLock { table in
            if table[key] == nil, table.count >= capacity,
                let oldest = table.min(by: { $0.value.storedAt < $1.value.storedAt })?.key
            {
                table[oldest] = nil
            }
            table[key] = Entry(chain: chain, storedAt: now, onlineChecked: onlineChecked)
        }
    }

    public var count: Int { entries.withLock { $0.count } }

    public func removeAll() { entries.withLock { $0.removeAll() } }
}
