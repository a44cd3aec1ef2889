import AppStoreClient
import AppStoreModels
import AppStoreTrust
import Foundation
import Storage

/// Replays Get Notification History for one app and environment from its durable cursor:
/// every page from the cursor minus an overlap to now, each signed payload through
/// `NotificationIngestor.ingest(app:signedPayload:)` (a notification already stored is a free
/// no-op), the cursor moved forward only once a page's notifications are all committed.
///
/// Many instances: the cursor is leased (`leaseHistoryCursor`) for the run and only the lease
/// holder can move it, so two servers never replay one cursor at once; a server that dies
/// mid-run leaves the lease to expire and the next run starts again from the cursor.
///
/// Apple keeps 180 days of history in Production and 30 in Sandbox, and refuses a start date
/// further back: the start is clamped to the look-back minus a margin.
/// - Note: Immutable and `Sendable`.
public struct NotificationHistoryReplay: Sendable {
    /// Tunables of a run.
    /// - Note: Immutable value; `Sendable`.
    public struct Settings: Sendable, Hashable {
        /// How far before the cursor a run starts (notifications signed at the edge of the last
        /// run, clocks that disagree).
        public var overlapMilliseconds: Int64
        /// Ask Apple only for notifications it failed to deliver.
        public var onlyFailures: Bool
        /// How long a run may hold the cursor before another instance may take it (extended
        /// after every page).
        public var leaseMilliseconds: Int64
        /// Kept between the start date and Apple's look-back limit.
        public var lookBackMarginMilliseconds: Int64
        /// Pages per run at most (a run that stops here continues from the cursor next time).
        public var maxPages: Int

        public init(
            overlapMilliseconds: Int64 = 3_600_000, onlyFailures: Bool = false, leaseMilliseconds: Int64 = 900_000,
            lookBackMarginMilliseconds: Int64 = 86_400_000, maxPages: Int = 5_000
        ) {
            self.overlapMilliseconds = max(0, overlapMilliseconds)
            self.onlyFailures = onlyFailures
            self.leaseMilliseconds = max(1000, leaseMilliseconds)
            self.lookBackMarginMilliseconds = max(0, lookBackMarginMilliseconds)
            self.maxPages = max(1, maxPages)
        }
    }

    /// What one run did.
    /// - Note: Immutable value; `Sendable`.
    public struct Run: Sendable, Hashable {
        /// `false` when another owner holds the cursor: nothing was asked.
        public var leased: Bool
        public var pages = 0
        /// Notifications handed to ingestion.
        public var replayed = 0
        /// Of those, ones not stored before (facts Storekeeper had missed).
        public var newNotifications = 0
        /// Refused by verification or incomplete: recorded in the audit log and skipped.
        public var refused = 0
        /// The window asked for.
        public var startDate: Timestamp?
        public var endDate: Timestamp?
        /// The cursor after the run.
        public var cursor: Timestamp?
        /// The whole window was covered (the cursor is at `endDate`).
        public var completed = false
        /// Why the run stopped early (Apple, the database, a lost lease); the cursor stays where
        /// the last committed page left it.
        public var failure: IngestionError?
    }

    /// How far back Apple keeps notification history: 180 days in Production, 30 in Sandbox
    /// (Get Notification History).
    public static func lookBackMilliseconds(for environment: AppStoreEnvironment) -> Int64 {
        (environment == .production ? 180 : 30) * 86_400_000
    }

    let store: any Store
    let clock: ServerClock
    let notifications: NotificationIngestor

    /// The window a run asks for at `now` with the cursor at `cursor`: from the cursor minus the
    /// overlap (the whole look-back on a first run), never before Apple's look-back limit plus
    /// the margin, to `now`.
    public static func window(
        cursor: Timestamp?, now: Timestamp, environment: AppStoreEnvironment, settings: Settings
    ) -> (start: Timestamp, end: Timestamp) {
        let earliest = now.adding(
            milliseconds: -lookBackMilliseconds(for: environment) + settings.lookBackMarginMilliseconds)
        let wanted = cursor.map { $0.adding(milliseconds: -settings.overlapMilliseconds) } ?? earliest
        let start = max(wanted.millisecondsSince1970, earliest.millisecondsSince1970)
        return (Timestamp(millisecondsSince1970: min(start, now.millisecondsSince1970)), now)
    }

    /// One run for `app` in `environment` as `owner`. Throws only when the run cannot start (no
    /// App Store Connect key, the cursor unreadable); a run that stops early says why in
    /// `failure`, its cursor left where the last committed page put it and its lease released
    /// with the error recorded.
    public func replay(
        app: AppRuntime, environment: AppStoreEnvironment, owner: String, settings: Settings
    ) async throws(IngestionError) -> Run {
        guard let connection = try app.connection(environment, required: true) else { throw app.missingAppStoreKey }
        let appId = app.id
        let leaseMilliseconds = settings.leaseMilliseconds
        let started = clock.now()
        let cursor: HistoryCursor?
        do {
            cursor = try await store.write { transaction in
                try transaction.leaseHistoryCursor(
                    appId: appId, environment: environment, owner: owner, now: started,
                    leaseMilliseconds: leaseMilliseconds)
            }
        } catch {
            throw IngestionError.store(error)
        }
        guard let cursor else { return Run(leased: false) }
        let (start, end) = Self.window(
            cursor: cursor.cursorAt, now: started, environment: environment, settings: settings)
        var run = Run(leased: true, startDate: start, endDate: end, cursor: cursor.cursorAt)
        do throws(IngestionError) {
            try await pages(
                app: app, environment: environment, connection: connection, owner: owner, settings: settings,
                run: &run)
            try await release(appId: appId, environment: environment, owner: owner, error: nil)
        } catch {
            try? await release(appId: appId, environment: environment, owner: owner, error: error.description)
            run.failure = error
        }
        return run
    }

    private func pages(
        app: AppRuntime, environment: AppStoreEnvironment, connection: any AppStoreConnection, owner: String,
        settings: Settings, run: inout Run
    ) async throws(IngestionError) {
        guard let start = run.startDate, let end = run.endDate else { return }
        var request = NotificationHistoryRequest(startDate: start, endDate: end)
        if settings.onlyFailures { request.onlyFailures = true }
        var token: String?
        while run.pages < settings.maxPages {
            if Task.isCancelled {
                throw IngestionError(.appStoreUnavailable, "The replay was cancelled.", retryAfterSeconds: 1)
            }
            let page: NotificationHistoryResponse
            do {
                page = try await connection.notificationHistory(request, paginationToken: token)
            } catch {
                if error.code == .invalidConfiguration { throw app.missingAppStoreKey }
                throw IngestionError.appStore(error)
            }
            run.pages += 1
            var latest: Timestamp?
            for item in page.notificationHistory ?? [] {
                guard let signedPayload = item.signedPayload else { continue }
                do {
                    let result = try await notifications.ingest(app: app, signedPayload: signedPayload)
                    run.replayed += 1
                    if result.outcome != .duplicate { run.newNotifications += 1 }
                    let signed = UnverifiedJWS.payload(signedPayload, as: ResponseBodyV2DecodedPayload.self)?.signedDate
                    if let signed, latest.map({ signed > $0 }) ?? true { latest = signed }
                } catch  where !error.isRetryable {
                    // Refused for good (its audit entry says why): skipping it cannot lose
                    // anything Apple would send again, and stopping would pin the cursor forever.
                    run.refused += 1
                }
            }
            let more = page.hasMore == true && page.paginationToken != nil && page.paginationToken != token
            // Every notification of the page is committed: the cursor may move to what the page
            // covered (history comes oldest first; the next run's overlap covers equal instants).
            if let position = more ? latest : end {
                guard try await advance(app.id, environment, owner: owner, to: position, settings: settings) else {
                    throw IngestionError(.conflict, "The history cursor's lease was lost to another worker.")
                }
                if run.cursor.map({ position > $0 }) ?? true { run.cursor = position }
            }
            guard more else {
                run.completed = true
                return
            }
            token = page.paginationToken
        }
    }

    /// Moves the cursor and extends the lease, in one transaction; `false` if the lease is gone.
    private func advance(
        _ appId: String, _ environment: AppStoreEnvironment, owner: String, to position: Timestamp,
        settings: Settings
    ) async throws(IngestionError) -> Bool {
        let now = clock.now()
        do {
            return try await store.write { transaction in
                guard
                    try transaction.advanceHistoryCursor(
                        appId: appId, environment: environment, owner: owner, to: position, now: now)
                else { return false }
                return try transaction.leaseHistoryCursor(
                    appId: appId, environment: environment, owner: owner, now: now,
                    leaseMilliseconds: settings.leaseMilliseconds) != nil
            }
        } catch {
            throw IngestionError.store(error)
        }
    }

    private func release(appId: String, environment: AppStoreEnvironment, owner: String, error: String?)
        async throws(IngestionError)
    {
        let now = clock.now()
        let bounded = error.map { String($0.prefix(1000)) }
        do {
            _ = try await store.write { transaction in
                try transaction.releaseHistoryCursor(
                    appId: appId, environment: environment, owner: owner, error: bounded, now: now)
            }
        } catch {
            throw IngestionError.store(error)
        }
    }
}
