import AppStoreModels
import Entitlements

/// The Google Play recovery workers' state (migration `0017_play_recovery`): the voided-purchases
/// cursor of each app and the watch of each subscription token.
extension SQLStoreTransaction {
    // MARK: Voided-purchases cursors

    func leasePlayVoidedCursor(appId: String, owner: String, now: Timestamp, leaseMilliseconds: Int64) throws
        -> PlayVoidedCursor?
    {
        _ = try execute(
            """
            INSERT INTO play_voided_cursors (app_id, updated_at) VALUES ($1, $2)
            ON CONFLICT (app_id) DO NOTHING
            """, .text(appId), SQLValue(now))
        // One statement decides (as for history cursors): on PostgreSQL a second claimer
        // re-checks the lease on the first one's committed row, so only one gets it.
        let taken = try rows(
            """
            UPDATE play_voided_cursors
            SET lease_owner = $2, lease_expires_at = $3, last_run_at = $4, updated_at = $4
            WHERE app_id = $1
              AND (lease_owner IS NULL OR lease_owner = $2 OR lease_expires_at IS NULL OR lease_expires_at <= $4)
            RETURNING app_id
            """, .text(appId), .text(owner), SQLValue(now.adding(milliseconds: leaseMilliseconds)), SQLValue(now))
        guard !taken.isEmpty else { return nil }
        return try playVoidedCursor(appId: appId)
    }

    func advancePlayVoidedCursor(
        appId: String, owner: String, to cursor: Timestamp, now: Timestamp, leaseMilliseconds: Int64
    ) throws -> Bool {
        try execute(
            """
            UPDATE play_voided_cursors
            SET cursor_at = CASE WHEN cursor_at IS NULL OR cursor_at < $3 THEN $3 ELSE cursor_at END,
                last_error = NULL, lease_expires_at = $5, updated_at = $4,
                window_start = NULL, window_end = NULL, page_token = NULL
            WHERE app_id = $1 AND lease_owner = $2 AND lease_expires_at > $4
            """, .text(appId), .text(owner), SQLValue(cursor), SQLValue(now),
            SQLValue(now.adding(milliseconds: leaseMilliseconds))) == 1
    }

    func holdPlayVoidedWindow(
        appId: String, owner: String, window: PlayVoidedWindow?, now: Timestamp, leaseMilliseconds: Int64
    ) throws -> Bool {
        try execute(
            """
            UPDATE play_voided_cursors
            SET window_start = $3, window_end = $4, page_token = $5, lease_expires_at = $7, updated_at = $6
            WHERE app_id = $1 AND lease_owner = $2 AND lease_expires_at > $6
            """, .text(appId), .text(owner), SQLValue(window?.start), SQLValue(window?.end),
            SQLValue(window?.pageToken), SQLValue(now), SQLValue(now.adding(milliseconds: leaseMilliseconds))) == 1
    }

    func releasePlayVoidedCursor(appId: String, owner: String, error: String?, now: Timestamp) throws -> Bool {
        try execute(
            """
            UPDATE play_voided_cursors
            SET lease_owner = NULL, lease_expires_at = NULL, last_error = $3, updated_at = $4
            WHERE app_id = $1 AND lease_owner = $2
            """, .text(appId), .text(owner), SQLValue(error), SQLValue(now)) == 1
    }

    func playVoidedCursor(appId: String) throws -> PlayVoidedCursor? {
        try playVoidedCursors(where: "WHERE app_id = $1", .text(appId)).first
    }

    func playVoidedCursors() throws -> [PlayVoidedCursor] {
        try playVoidedCursors(where: "")
    }

    private func playVoidedCursors(where filter: String, _ arguments: SQLValue...) throws -> [PlayVoidedCursor] {
        let sql = """
            SELECT app_id, cursor_at, lease_owner, lease_expires_at, last_run_at, last_error, updated_at,
                   window_start, window_end, page_token
            FROM play_voided_cursors \(filter)
            ORDER BY app_id
            """
        return try connection.query(sql, arguments).map { row throws(StoreError) -> PlayVoidedCursor in
            var window: PlayVoidedWindow?
            if let start = try row.optionalTimestamp(7), let end = try row.optionalTimestamp(8),
                let token = try row.optionalText(9)
            {
                window = PlayVoidedWindow(start: start, end: end, pageToken: token)
            }
            return PlayVoidedCursor(
                appId: try row.text(0), cursorAt: try row.optionalTimestamp(1), leaseOwner: try row.optionalText(2),
                leaseExpiresAt: try row.optionalTimestamp(3), lastRunAt: try row.optionalTimestamp(4),
                lastError: try row.optionalText(5), updatedAt: try row.timestamp(6), openWindow: window)
        }
    }

    // MARK: Voided purchases of tokens not read

    /// Voided snapshots with no read of their token (`play_purchase_tokens`), the oldest first.
    private static let unmatchedVoided = """
        FROM play_snapshots p
        WHERE p.app_id = $1 AND p.kind = 'voided'
          AND NOT EXISTS (
              SELECT 1 FROM play_purchase_tokens t WHERE t.app_id = p.app_id AND t.purchase_token = p.purchase_token)
        """

    func playUnmatchedVoided(appId: String, limit: Int) throws -> [PlayUnmatchedVoided] {
        try rows(
            "SELECT p.fact_json, p.source, p.received_at \(Self.unmatchedVoided) ORDER BY p.read_at, p.id LIMIT $2",
            .text(appId), SQLValue(limit)
        ).map { row throws(StoreError) in
            PlayUnmatchedVoided(
                fact: try Self.decode(PlayVoidedPurchaseFact.self, try row.text(0), column: "fact_json"),
                source: try row.text(1), receivedAt: try row.timestamp(2))
        }
    }

    func playUnmatchedVoidedCount(appId: String) throws -> Int {
        Int(try row("SELECT COUNT(*) \(Self.unmatchedVoided)", .text(appId))?.integer(0) ?? 0)
    }

    /// A token's read settles what its voided purchases stored before it could not say: the
    /// product type (`nil` from the voided-purchases list) and the environment (a license
    /// tester's purchase is the sandbox). Only those facts change; Google's JSON stays verbatim.
    func settlePlayVoided(appId: String, purchaseToken: String, productType: PlayProductType, isTestPurchase: Bool)
        throws
    {
        let environment: AppStoreEnvironment = isTestPurchase ? .sandbox : .production
        for row in try rows(
            "SELECT id, fact_json FROM play_snapshots WHERE app_id = $1 AND kind = 'voided' AND purchase_token = $2",
            .text(appId), .text(purchaseToken))
        {
            var fact = try Self.decode(PlayVoidedPurchaseFact.self, try row.text(1), column: "fact_json")
            guard fact.productType == nil || fact.isTestPurchase != isTestPurchase else { continue }
            fact.productType = fact.productType ?? productType
            fact.isTestPurchase = isTestPurchase
            try execute(
                "UPDATE play_snapshots SET fact_json = $2, environment = $3 WHERE id = $1",
                .integer(try row.integer(0)),
                .text(Self.jsonText(fact)), .text(environment.rawValue))
        }
    }

    func playSnapshotExists(appId: String, kind: PlayFactKind, purchaseToken: String, readAt: Timestamp) throws
        -> Bool
    {
        try row(
            """
            SELECT 1 FROM play_snapshots WHERE app_id = $1 AND kind = $2 AND purchase_token = $3 AND read_at = $4
            """, .text(appId), .text(kind.rawValue), .text(purchaseToken), SQLValue(readAt)) != nil
    }

    // MARK: Subscription watch

    /// What a stored subscription read tells the re-read worker: the newest read (by read
    /// instant; at one instant the greater state, then expiry) gives the state and expiry.
    func watchPlaySubscription(appId: String, fact: PlaySubscriptionFact) throws {
        let expiry = fact.lineItems.compactMap(\.expiryTime).max()
        let binary = dialect == .postgres ? " COLLATE \"C\"" : ""
        try execute(
            """
            INSERT INTO play_subscription_watch (app_id, purchase_token, state, expires_at, last_read_at)
            VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (app_id, purchase_token) DO UPDATE SET
                state = excluded.state, expires_at = excluded.expires_at, last_read_at = excluded.last_read_at
            WHERE excluded.last_read_at > play_subscription_watch.last_read_at
               OR (excluded.last_read_at = play_subscription_watch.last_read_at
                   AND (excluded.state\(binary) > play_subscription_watch.state\(binary)
                        OR (excluded.state = play_subscription_watch.state
                            AND COALESCE(excluded.expires_at, 0) > COALESCE(play_subscription_watch.expires_at, 0))))
            """, .text(appId), .text(fact.purchaseToken), .text(fact.state.rawValue), SQLValue(expiry),
            SQLValue(fact.readAt))
    }

    func claimPlayRereads(
        appId: String, rules: PlayRereadRules, owner: String, now: Timestamp, leaseMilliseconds: Int64, limit: Int
    ) throws -> [PlaySubscriptionWatch] {
        try rows(
            dialect == .postgres ? Self.playRereadClaimPostgres : Self.playRereadClaimSQLite, .text(owner),
            SQLValue(now.adding(milliseconds: leaseMilliseconds)), .text(appId), SQLValue(now),
            SQLValue(now.adding(milliseconds: -rules.expiryDelayMilliseconds)),
            SQLValue(now.adding(milliseconds: -rules.pendingIntervalMilliseconds)), SQLValue(limit)
        ).map(Self.playWatch).sorted { $0.purchaseToken < $1.purchaseToken }
    }

    static let playRereadClaimSQLite = playRereadClaim(lock: "")
    static let playRereadClaimPostgres = playRereadClaim(lock: "FOR UPDATE SKIP LOCKED")

    /// The claim: leases (`$1` owner, `$2` until) the first `$7` due tokens of app `$3` at `$4`,
    /// known expiries first, earliest first (the order `play_subscription_watch_claimable` holds, so the
    /// walk stops at the batch). `$5`: the expiry before which one is overdue; `$6`: the last
    /// read before which a pending one is due again.
    private static func playRereadClaim(lock: String) -> String {
        // Due: read with access (active, canceled, in grace) but past its expiry plus the delay,
        // with no read and no re-read since the expiry; or read in grace, on hold or paused, or
        // still read with access past its expiry (a renewal Google has not charged yet), with
        // nothing read or re-read for the interval. "Heard" is the later of the two.
        let withAccess = PlayRereadStates.withAccess.map { "'\($0)'" }.joined(separator: ", ")
        let pending = PlayRereadStates.pending.map { "'\($0)'" }.joined(separator: ", ")
        // Implied by the rest; stated so that both engines walk `play_subscription_watch_claimable`
        // (migration 0039), whose condition it is word for word.
        let claimable = PlayRereadStates.claimable.map { "'\($0)'" }.joined(separator: ", ")
        let due = """
            app_id = $3 AND state IN (\(claimable))
              AND (lease_expires_at IS NULL OR lease_expires_at <= $4)
              AND (
                (state IN (\(withAccess)) AND expires_at IS NOT NULL AND expires_at <= $5
                 AND last_read_at < expires_at AND (last_reread_at IS NULL OR last_reread_at < expires_at))
                OR ((state IN (\(pending))
                     OR (state IN (\(withAccess)) AND expires_at IS NOT NULL AND expires_at <= $5))
                    AND (CASE WHEN last_reread_at IS NULL OR last_read_at > last_reread_at
                         THEN last_read_at ELSE last_reread_at END) <= $6))
            """
        return """
            UPDATE play_subscription_watch SET lease_owner = $1, lease_expires_at = $2
            WHERE (app_id, purchase_token) IN (
                SELECT app_id, purchase_token FROM play_subscription_watch
                WHERE \(due)
                ORDER BY CASE WHEN expires_at IS NULL THEN 1 ELSE 0 END, expires_at, purchase_token
                LIMIT $7
                \(lock))
            RETURNING app_id, purchase_token, state, expires_at, last_read_at, last_reread_at
            """
    }

    func finishPlayReread(
        appId: String, purchaseToken: String, owner: String, rereadAt: Timestamp?, retryAt: Timestamp?
    ) throws -> Bool {
        if let rereadAt {
            return try execute(
                """
                UPDATE play_subscription_watch SET last_reread_at = $4, lease_owner = NULL, lease_expires_at = NULL
                WHERE app_id = $1 AND purchase_token = $2 AND lease_owner = $3
                """, .text(appId), .text(purchaseToken), .text(owner), SQLValue(rereadAt)) == 1
        }
        // A failed re-read keeps its lease until `retryAt`: the lease is the backoff.
        return try execute(
            """
            UPDATE play_subscription_watch SET lease_expires_at = $4
            WHERE app_id = $1 AND purchase_token = $2 AND lease_owner = $3
            """, .text(appId), .text(purchaseToken), .text(owner), SQLValue(retryAt)) == 1
    }

    func playSubscriptionWatch(appId: String, purchaseToken: String) throws -> PlaySubscriptionWatch? {
        try row(
            """
            SELECT app_id, purchase_token, state, expires_at, last_read_at, last_reread_at
            FROM play_subscription_watch WHERE app_id = $1 AND purchase_token = $2
            """, .text(appId), .text(purchaseToken)
        ).map(Self.playWatch)
    }

    private static func playWatch(_ row: SQLRow) throws(StoreError) -> PlaySubscriptionWatch {
        PlaySubscriptionWatch(
            appId: try row.text(0), purchaseToken: try row.text(1), state: try row.text(2),
            expiresAt: try row.optionalTimestamp(3), lastReadAt: try row.timestamp(4),
            lastRereadAt: try row.optionalTimestamp(5))
    }
}

/// The `subscriptionState` values the re-read rules name (literal SQL: Google's constants).
enum PlayRereadStates {
    /// States that give access until the expiry.
    static let withAccess = [
        PlaySubscriptionState.active, .canceled, .inGracePeriod,
    ].map(\.rawValue)
    /// States waiting on Google: a recovery, a hold's end, a resume.
    static let pending = [PlaySubscriptionState.inGracePeriod, .onHold, .paused].map(\.rawValue)
    /// Either, in the order migration `0039_play_watch_claimable` writes them.
    static let claimable = [
        PlaySubscriptionState.active, .canceled, .inGracePeriod, .onHold, .paused,
    ].map(\.rawValue)
}
