import Foundation

/// Where a trusted key set comes from: a file, or a URL (Google's
/// `https://www.googleapis.com/oauth2/v3/certs`, or the simulator's JWKS endpoint) fetched by a
/// loader the client module provides.
/// - Note: Implementations must be safe to call from many tasks at once.
public protocol GoogleKeySetLoader: Sendable {
    /// The JWKS bytes; a thrown error means "unavailable now" and a cached set stays in use.
    func loadKeySet() async throws(GooglePlayTrustError) -> Data
    /// Where the keys come from, for messages (never a secret).
    var origin: String { get }
}

/// A JWKS file on disk, read again on each refresh (so replacing the file rotates the keys).
/// - Note: Immutable value; `Sendable`.
public struct GoogleKeySetFile: GoogleKeySetLoader {
    public let path: String

    public init(path: String) { self.path = path }

    public var origin: String { path }

    public func loadKeySet() async throws(GooglePlayTrustError) -> Data {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw GooglePlayTrustError(.keySetUnavailable, "cannot read key set file \(path)")
        }
        defer { try? handle.close() }
        // Read one byte more than allowed so an oversized file is seen as such, not truncated.
        guard let data = try? handle.read(upToCount: GoogleKeySet.maximumBytes + 1) else {
            throw GooglePlayTrustError(.keySetUnavailable, "cannot read key set file \(path)")
        }
        return data
    }
}

/// The trusted keys, loaded on first use and cached: reloaded once `maximumAge` has passed, and
/// early when a token names a `kid` the cache does not hold (Google rotates its keys about every
/// two weeks and signs with the new one soon after publishing it). Early reloads are spaced by
/// `minimumRefetchInterval`, so a stream of tokens with bogus kids costs one fetch per interval,
/// not one per token. When a reload fails the previous set stays in use.
///
/// Time is an argument (`now`), so tests and the simulator's clock drive expiry.
/// - Note: An actor: one load runs at a time and callers waiting for a key share it.
public actor GoogleKeySetCache {
    public let loader: any GoogleKeySetLoader
    public let maximumAge: TimeInterval
    public let minimumRefetchInterval: TimeInterval

    private var keySet: GoogleKeySet?
    private var loadedAt: Date?
    private var lastAttempt: Date?
    private var inFlight: Task<Result<GoogleKeySet, GooglePlayTrustError>, Never>?
    /// How many loads were started (a test reads it to see that refetching is rate-limited).
    public private(set) var loadCount = 0

    public init(
        loader: any GoogleKeySetLoader, maximumAge: TimeInterval = 3600, minimumRefetchInterval: TimeInterval = 60
    ) {
        self.loader = loader
        self.maximumAge = maximumAge
        self.minimumRefetchInterval = minimumRefetchInterval
    }

    /// The key named `kid`, reloading the set when it is stale or lacks that kid (rate-limited).
    public func key(kid: String, now: Date) async throws(GooglePlayTrustError) -> RSAPublicKey {
        let origin = loader.origin
        let stale = loadedAt.map { now.timeIntervalSince($0) >= maximumAge || now < $0 } ?? true
        if keySet == nil || stale {
            // A failed reload keeps the previous set; with none there is nothing to verify with.
            let failure = await reload(now: now, force: keySet == nil && lastAttempt == nil)
            if keySet == nil {
                throw failure
                    ?? GooglePlayTrustError(.keySetUnavailable, "no key set loaded from \(origin) yet")
            }
        }
        if let key = keySet?.keys[kid] { return key }
        _ = await reload(now: now, force: false)
        if let key = keySet?.keys[kid] { return key }
        // The kid is attacker-chosen: bounded before it reaches a log line.
        let shown = String(kid.prefix(64))
        throw GooglePlayTrustError(.kidUnknown, "kid \(shown) is not in the key set from \(origin)")
    }

    /// Loads now unless the last attempt was less than `minimumRefetchInterval` ago (`force`
    /// skips that wait only for the very first load). Returns the failure, if the load failed.
    private func reload(now: Date, force: Bool) async -> GooglePlayTrustError? {
        let origin = loader.origin
        if !force, let lastAttempt, now.timeIntervalSince(lastAttempt) < minimumRefetchInterval,
            now >= lastAttempt
        {
            return GooglePlayTrustError(
                .keySetUnavailable, "key set reload from \(origin) is rate-limited")
        }
        let task: Task<Result<GoogleKeySet, GooglePlayTrustError>, Never>
        if let inFlight {
            task = inFlight
        } else {
            lastAttempt = now
            loadCount += 1
            let loader = self.loader
            task = Task {
                do throws(GooglePlayTrustError) {
                    return .success(try GoogleKeySet(json: try await loader.loadKeySet()))
                } catch {
                    return .failure(error)
                }
            }
            inFlight = task
        }
        let result = await task.value
        if inFlight == task {
            inFlight = nil
            if case .success(let set) = result {
                keySet = set
                loadedAt = now
            }
        }
        if case .failure(let error) = result { return error }
        return nil
    }
}
