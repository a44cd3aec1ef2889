import AppStoreModels
import Entitlements
import Foundation
import GooglePlayClient
import GooglePlayModels
import Storage

/// Voided-purchases polling: the safety net under `voidedPurchaseNotification` and
/// `SUBSCRIPTION_REVOKED` pushes. One run lists `purchases.voidedpurchases.list` (subscriptions
/// and products, partial refunds included) from the app's cursor minus an overlap to now, page
/// by page, and commits each page's voided purchases through the one commit path
/// (`PlayIngestor`), as a push would have; the cursor moves to the end of the window only after
/// every page committed. A voided purchase already stored is a free no-op.
///
/// A window longer than one run's pages stays open: after each committed page the window and
/// Google's page token of the next page are saved with the lease, and the next run (on any
/// instance) lists the same window from that page, so every window completes however long.
///
/// The list names no product type: it is the stored token's (`play_purchase_tokens`). A voided
/// purchase of a token Storekeeper never read is kept all the same (`unknownTokens`), without a
/// product type and in the app's production environment when it holds one: it refunds nothing
/// until the token's first read, which settles both and applies the refund (an app posting
/// the token later, a notification). An entry without a token or time is skipped.
/// - Note: Immutable and `Sendable`.
public struct PlayVoidedPurchasesPolling: Sendable {
    /// Tunables of a run.
    /// - Note: Immutable value; `Sendable`.
    public struct Settings: Sendable {
        /// How far before the cursor a run starts (a void Google lists late is still found).
        public var overlapMilliseconds: Int64
        /// How long a run holds the cursor; extended after every page.
        public var leaseMilliseconds: Int64
        /// Pages per run at most; a longer list continues at the next run from the same cursor.
        public var maximumPages: Int
        public var pageSize: UInt32

        public init(
            overlapMilliseconds: Int64 = 3_600_000, leaseMilliseconds: Int64 = 900_000, maximumPages: Int = 100,
            pageSize: UInt32 = 1000
        ) {
            self.overlapMilliseconds = max(0, overlapMilliseconds)
            self.leaseMilliseconds = max(1000, leaseMilliseconds)
            self.maximumPages = max(1, maximumPages)
            self.pageSize = min(max(1, pageSize), 1000)
        }
    }

    /// What one run did.
    /// - Note: Immutable value; `Sendable`.
    public struct Run: Sendable {
        /// `false`: another instance held the cursor; nothing was done.
        public var leased = false
        /// Every page of the window was committed and the cursor moved to its end.
        public var completed = false
        public var pages = 0
        /// Voided purchases Google listed.
        public var listed = 0
        /// Of those, the ones Storekeeper had not stored: lost pushes found.
        public var newVoided = 0
        /// Of those, the ones for purchase tokens Storekeeper has not read: kept, waiting for
        /// the token.
        public var unknownTokens = 0
        /// Entries not ingested: entries without a token or time, environments the app does
        /// not accept.
        public var skipped = 0
        /// The run went on with a window an earlier run left open.
        public var resumed = false
        /// The window asked for.
        public var windowStart: Timestamp?
        public var windowEnd: Timestamp?
        public var failure: IngestionError?
    }

    /// The longest page token kept (Google's are far shorter).
    static let maximumPageTokenBytes = 4096

    /// Google lists voided purchases of the last 30 days; a start further back is an error.
    public static let lookBackMilliseconds: Int64 = 30 * 86_400_000
    /// Kept off the look-back's edge, so clock skew with Google never makes it an error.
    static let lookBackMarginMilliseconds: Int64 = 3_600_000

    let store: any Store
    let clock: ServerClock
    let ingestor: PlayIngestor

    /// One run for `runtime`'s app, holding the cursor as `owner`.
    public func poll(runtime: PlayRuntime, owner: String, settings: Settings) async -> Run {
        let appId = runtime.appId
        var run = Run()
        let now = clock.now()
        let cursor: PlayVoidedCursor?
        do {
            cursor = try await store.write { transaction in
                try transaction.leasePlayVoidedCursor(
                    appId: appId, owner: owner, now: now, leaseMilliseconds: settings.leaseMilliseconds)
            }
        } catch {
            run.failure = IngestionError.store(error)
            return run
        }
        guard let cursor else { return run }
        run.leased = true
        let earliest = now.adding(milliseconds: -Self.lookBackMilliseconds + Self.lookBackMarginMilliseconds)
        let start =
            cursor.cursorAt.map { max($0.adding(milliseconds: -settings.overlapMilliseconds), earliest) } ?? earliest
        let open = cursor.openWindow
        let (windowStart, windowEnd) = open.map { ($0.start, $0.end) } ?? (start, now)
        (run.windowStart, run.windowEnd, run.resumed) = (windowStart, windowEnd, open != nil)
        do throws(IngestionError) {
            try await pages(
                runtime: runtime, from: windowStart, to: windowEnd, resumingAt: open?.pageToken, owner: owner,
                settings: settings, run: &run)
            if run.completed {
                let movedAt = clock.now()
                let moved = try await write { transaction in
                    try transaction.advancePlayVoidedCursor(
                        appId: appId, owner: owner, to: windowEnd, now: movedAt,
                        leaseMilliseconds: settings.leaseMilliseconds)
                }
                if !moved { run.completed = false }
            }
        } catch {
            run.failure = error
            // Google refused the saved page token (expired, say): the next run lists the window
            // again from its start, which is idempotent, rather than failing on it for ever. A
            // Google outage keeps the window.
            if open != nil, run.pages == 0, error.code != .googlePlayUnavailable {
                let at = clock.now()
                _ = try? await store.write { transaction in
                    try transaction.holdPlayVoidedWindow(
                        appId: appId, owner: owner, window: nil, now: at, leaseMilliseconds: settings.leaseMilliseconds)
                }
            }
        }
        let (error, releasedAt) = (run.failure.map { $0.code.rawValue }, clock.now())
        _ = try? await store.write { transaction in
            try transaction.releasePlayVoidedCursor(appId: appId, owner: owner, error: error, now: releasedAt)
        }
        return run
    }

    private func pages(
        runtime: PlayRuntime, from start: Timestamp, to end: Timestamp, resumingAt pageToken: String?, owner: String,
        settings: Settings, run: inout Run
    ) async throws(IngestionError) {
        var query = VoidedPurchasesQuery(
            startTime: EpochMillisString(milliseconds: start.millisecondsSince1970),
            endTime: EpochMillisString(milliseconds: end.millisecondsSince1970), maxResults: settings.pageSize,
            type: 1, includeQuantityBasedPartialRefund: true)
        query.token = pageToken
        var seenTokens: Set<String> = pageToken.map { [$0] } ?? []
        for _ in 0..<settings.maximumPages {
            let page = try await runtime.listVoidedPurchases(query)
            run.pages += 1
            let entries = page.voidedPurchases ?? []
            run.listed += entries.count
            try await ingest(entries, runtime: runtime, run: &run)
            let next = page.tokenPagination?.nextPageToken.flatMap { $0.isEmpty ? nil : $0 }
            if let next {
                guard next.utf8.count <= Self.maximumPageTokenBytes, seenTokens.insert(next).inserted else {
                    throw IngestionError(.googlePlayError, "Google Play's voided purchases repeat a page token.")
                }
            }
            // The page is committed: hold the cursor, with where the window goes on.
            let (appId, now) = (runtime.appId, clock.now())
            let window = next.map { PlayVoidedWindow(start: start, end: end, pageToken: $0) }
            let held = try await write { transaction in
                try transaction.holdPlayVoidedWindow(
                    appId: appId, owner: owner, window: window, now: now, leaseMilliseconds: settings.leaseMilliseconds)
            }
            guard held else { return }
            guard let next else {
                run.completed = true
                return
            }
            query.token = next
        }
    }

    /// The page's voided purchases as facts, committed per environment.
    private func ingest(_ entries: [VoidedPurchase], runtime: PlayRuntime, run: inout Run)
        async throws(IngestionError)
    {
        let settings = runtime.settings
        let appId = settings.appId
        let tokens = Set(
            entries.compactMap(\.purchaseToken).filter {
                !$0.isEmpty && $0.utf8.count <= VerifiedPlaySnapshot.maximumTokenBytes
            })
        let packageName = settings.packageName
        let (known, holdsProduction) = try await read { reader in
            var known: [String: PlayPurchaseTokenRecord] = [:]
            for token in tokens { known[token] = try reader.playPurchaseToken(appId: appId, purchaseToken: token) }
            return (known, try reader.appId(playPackageName: packageName, environment: .production) == appId)
        }
        var byEnvironment: [AppStoreEnvironment: [VerifiedPlaySnapshot]] = [:]
        var facts: [PlayVoidedPurchaseFact] = []
        for entry in entries {
            // A token not read yet: no product type, and the app's production side when it has
            // one; the token's first read settles both (`PlayVoidedPurchaseFact`).
            let record = entry.purchaseToken.flatMap { known[$0] }
            guard let token = entry.purchaseToken, tokens.contains(token),
                let fact = try? PlayFactMapping.voided(
                    entry, packageName: packageName,
                    productType: record.map { $0.kind == .product ? .oneTime : .subscription },
                    isTestPurchase: record.map { $0.environment == .sandbox } ?? !holdsProduction),
                let snapshot = try? VerifiedPlaySnapshot(
                    fact: .playVoidedPurchase(fact), raw: String(decoding: GooglePlayJSON.encode(entry), as: UTF8.self))
            else {
                run.skipped += 1
                continue
            }
            facts.append(fact)
            byEnvironment[fact.environment, default: []].append(snapshot)
        }
        let candidates = facts
        let stored = try await read { reader in
            try candidates.filter {
                try reader.playSnapshotExists(
                    appId: appId, kind: .voided, purchaseToken: $0.purchaseToken, readAt: $0.voidedAt)
            }.count
        }
        var committed = 0
        var unknownCommitted = 0
        for environment in byEnvironment.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            let snapshots = byEnvironment[environment]!
            do throws(IngestionError) {
                _ = try await ingestor.ingest(
                    settings: settings, notification: nil, snapshots: snapshots, source: "voided_poll",
                    receivedAt: clock.now())
                committed += snapshots.count
                unknownCommitted += snapshots.filter { known[$0.purchaseToken] == nil }.count
            } catch  where error.code == .environmentNotAccepted {
                // The app does not hold its package in that environment: nothing of it is the app's.
                run.skipped += snapshots.count
            }
        }
        run.newVoided += max(0, committed - stored)
        run.unknownTokens += unknownCommitted
    }

    private func read<T: Sendable>(_ body: @escaping @Sendable (any StoreReader) throws -> T)
        async throws(IngestionError)
        -> T
    {
        do {
            return try await store.read(body)
        } catch {
            throw IngestionError.store(error)
        }
    }

    private func write<T: Sendable>(_ body: @escaping @Sendable (any StoreTransaction) throws -> T)
        async throws(IngestionError) -> T
    {
        do {
            return try await store.write(body)
        } catch {
            throw IngestionError.store(error)
        }
    }
}
