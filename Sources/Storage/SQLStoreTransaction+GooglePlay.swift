import AppStoreModels
import Entitlements

/// Google Play (migration `0014_google_play`): an app's Play side, package ownership, purchase
/// tokens with their latest snapshot and acknowledgement, every snapshot verbatim, and RTDN
/// pushes verbatim.
extension SQLStoreTransaction {
    // MARK: The app's Play side

    func playAppSettings(appId: String) throws -> PlayAppSettings? {
        try row(
            """
            SELECT app_id, package_name, service_account_key, rtdn_audience, push_service_account_email,
                   acknowledge_purchases, version, read_order_revenue
            FROM play_app_settings WHERE app_id = $1
            """, .text(appId)
        ).map { row throws(StoreError) in
            PlayAppSettings(
                appId: try row.text(0), packageName: try row.text(1), serviceAccountKey: try row.optionalText(2),
                rtdnAudience: try row.optionalText(3), pushServiceAccountEmail: try row.optionalText(4),
                acknowledgePurchases: try row.bool(5), readOrderRevenue: try row.bool(7), version: try row.integer(6))
        }
    }

    /// The app's Play package name alone: saving an app needs nothing else of its Play side
    /// (and so reads no column a later migration added).
    func playPackageName(appId: String) throws -> String? {
        try row("SELECT package_name FROM play_app_settings WHERE app_id = $1", .text(appId))?.text(0)
    }

    func appId(playPackageName packageName: String, environment: AppStoreEnvironment) throws -> String? {
        try row(
            "SELECT app_id FROM play_package_names WHERE package_name = $1 AND environment = $2", .text(packageName),
            .text(environment.rawValue)
        )?.text(0)
    }

    func savePlayAppSettings(_ settings: PlayAppSettings, environments: [AppStoreEnvironment], at: Timestamp) throws
        -> Int64
    {
        try claimPlayPackage(settings.packageName, appId: settings.appId, environments: environments)
        let saved = try rows(
            """
            INSERT INTO play_app_settings (app_id, package_name, service_account_key, rtdn_audience,
                                           push_service_account_email, acknowledge_purchases, updated_at,
                                           read_order_revenue)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            ON CONFLICT (app_id) DO UPDATE SET
                package_name = excluded.package_name, service_account_key = excluded.service_account_key,
                rtdn_audience = excluded.rtdn_audience, push_service_account_email = excluded.push_service_account_email,
                acknowledge_purchases = excluded.acknowledge_purchases, updated_at = excluded.updated_at,
                read_order_revenue = excluded.read_order_revenue,
                version = play_app_settings.version + 1
            RETURNING version
            """,
            .text(settings.appId), .text(settings.packageName), SQLValue(settings.serviceAccountKey),
            SQLValue(settings.rtdnAudience), SQLValue(settings.pushServiceAccountEmail),
            SQLValue(settings.acknowledgePurchases), SQLValue(at), SQLValue(settings.readOrderRevenue))
        return try Self.returnedVersion(saved, of: "play_app_settings")
    }

    /// Claims `packageName` for the app in exactly `environments`, giving up its other claims.
    /// The package is claimed per environment: a claim another app holds is a conflict
    /// (`duplicate`, checked after `DO NOTHING`, since a failed statement would end a PostgreSQL
    /// transaction).
    func claimPlayPackage(_ packageName: String, appId: String, environments: [AppStoreEnvironment]) throws {
        try execute("DELETE FROM play_package_names WHERE app_id = $1", .text(appId))
        for environment in Set(environments).sorted(by: { $0.rawValue < $1.rawValue }) {
            try execute(
                """
                INSERT INTO play_package_names (package_name, environment, app_id) VALUES ($1, $2, $3)
                ON CONFLICT (package_name, environment) DO NOTHING
                """, .text(packageName), .text(environment.rawValue), .text(appId))
            let owner = try self.appId(playPackageName: packageName, environment: environment)
            guard owner == appId else {
                throw StoreError(
                    .duplicate,
                    "the package name \(packageName) already belongs to another app in \(environment.rawValue)")
            }
        }
    }

    // MARK: Facts

    /// Of two reads of one token at one instant, the row kept is the greater by (fact, raw):
    /// the same whatever the order (`renewalInfoConflict`'s rule), and the engine's choice too.
    var playSnapshotConflict: String {
        let binary = dialect == .postgres ? " COLLATE \"C\"" : ""
        return """
            ON CONFLICT (app_id, kind, purchase_token, read_at) DO UPDATE SET
                raw_json = excluded.raw_json, fact_json = excluded.fact_json, source = excluded.source,
                received_at = excluded.received_at
            WHERE (excluded.fact_json\(binary), excluded.raw_json\(binary))
                > (play_snapshots.fact_json\(binary), play_snapshots.raw_json\(binary))
            """
    }

    func insertPlayFact(_ fact: NewPlayFact) throws -> Insertion {
        if case .playOrder(let order) = fact.fact { return try insertPlayOrder(fact, order: order) }
        // The decoded fact itself, as the other fact tables store theirs (the kind names its type).
        let factJSON: String
        switch fact.fact {
        case .playSubscription(let value): factJSON = Self.jsonText(value)
        case .playProductPurchase(let value): factJSON = Self.jsonText(value)
        case .playVoidedPurchase(let value): factJSON = Self.jsonText(value)
        default: throw StoreError(.corruptValue, "play_snapshots hold Google Play facts only")
        }
        let inserted = try insertReturningId(
            """
            INSERT INTO play_snapshots (app_id, kind, purchase_token, environment, read_at, raw_json, fact_json,
                                        source, received_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
            \(playSnapshotConflict)
            RETURNING id
            """,
            [
                .text(fact.appId), .text(fact.kind.rawValue), .text(fact.purchaseToken),
                .text(fact.fact.environment.rawValue), SQLValue(fact.readAt), .text(fact.raw), .text(factJSON),
                .text(fact.source), SQLValue(fact.receivedAt),
            ])
        let (productId, linked, acknowledged): (String?, String?, Bool)
        switch fact.fact {
        case .playSubscription(let value):
            productId = value.lineItems.map(\.productId).sorted().joined(separator: ",")
            linked = value.linkedPurchaseToken
            acknowledged = value.isAcknowledged
            try watchPlaySubscription(appId: fact.appId, fact: value)
            try settlePlayVoided(
                appId: fact.appId, purchaseToken: value.purchaseToken, productType: .subscription,
                isTestPurchase: value.isTestPurchase)
        case .playProductPurchase(let value):
            productId = value.productId
            linked = nil
            acknowledged = value.isAcknowledged
            try settlePlayVoided(
                appId: fact.appId, purchaseToken: value.purchaseToken, productType: .oneTime,
                isTestPurchase: value.environment == .sandbox)
        default:
            return inserted.map(Insertion.inserted) ?? .duplicate
        }
        // The token's latest snapshot: a later read replaces it, an equal one by the same rule.
        let binary = dialect == .postgres ? " COLLATE \"C\"" : ""
        try execute(
            """
            INSERT INTO play_purchase_tokens (app_id, purchase_token, kind, environment, product_id,
                                              linked_purchase_token, latest_read_at, latest_raw_json,
                                              latest_fact_json, acknowledged, first_received_at, updated_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)
            ON CONFLICT (app_id, purchase_token) DO UPDATE SET
                product_id = excluded.product_id, linked_purchase_token = excluded.linked_purchase_token,
                latest_read_at = excluded.latest_read_at, latest_raw_json = excluded.latest_raw_json,
                latest_fact_json = excluded.latest_fact_json, updated_at = excluded.updated_at
            WHERE excluded.latest_read_at > play_purchase_tokens.latest_read_at
               OR (excluded.latest_read_at = play_purchase_tokens.latest_read_at
                   AND (excluded.latest_fact_json\(binary), excluded.latest_raw_json\(binary))
                       > (play_purchase_tokens.latest_fact_json\(binary), play_purchase_tokens.latest_raw_json\(binary)))
            """,
            .text(fact.appId), .text(fact.purchaseToken), .text(fact.kind.rawValue),
            .text(fact.fact.environment.rawValue), .text(productId ?? ""), SQLValue(linked), SQLValue(fact.readAt),
            .text(fact.raw), .text(factJSON), SQLValue(acknowledged), SQLValue(fact.receivedAt))
        // Acknowledgement is final: any read that shows it settles it.
        if acknowledged {
            try execute(
                """
                UPDATE play_purchase_tokens SET acknowledged = 1, acknowledgement_error = NULL
                WHERE app_id = $1 AND purchase_token = $2 AND acknowledged = 0
                """, .text(fact.appId), .text(fact.purchaseToken))
        }
        return inserted.map(Insertion.inserted) ?? .duplicate
    }

    /// An order read (0021): one row per (app, order id); a later read replaces it, of two
    /// reads at one instant the greater (fact, raw) text is kept, as for snapshots.
    private func insertPlayOrder(_ fact: NewPlayFact, order: PlayOrderFact) throws -> Insertion {
        let binary = dialect == .postgres ? " COLLATE \"C\"" : ""
        let factJSON = Self.jsonText(order)
        let changed = try rows(
            """
            INSERT INTO play_orders (app_id, order_id, purchase_token, environment, read_at, raw_json, fact_json,
                                     source, received_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
            ON CONFLICT (app_id, order_id) DO UPDATE SET
                purchase_token = excluded.purchase_token, environment = excluded.environment,
                read_at = excluded.read_at, raw_json = excluded.raw_json, fact_json = excluded.fact_json,
                source = excluded.source, received_at = excluded.received_at
            WHERE excluded.read_at > play_orders.read_at
               OR (excluded.read_at = play_orders.read_at
                   AND (excluded.fact_json\(binary), excluded.raw_json\(binary))
                       > (play_orders.fact_json\(binary), play_orders.raw_json\(binary)))
            RETURNING id
            """,
            .text(fact.appId), .text(order.orderId), .text(order.purchaseToken), .text(order.environment.rawValue),
            SQLValue(order.readAt), .text(fact.raw), .text(factJSON), .text(fact.source), SQLValue(fact.receivedAt))
        guard let row = changed.first else { return .duplicate }
        return .inserted(try row.integer(0))
    }

    /// Which of `orderIds` the app has read from the orders API already.
    func storedPlayOrderIds(appId: String, orderIds: [String]) throws -> Set<String> {
        var found: Set<String> = []
        for orderId in Set(orderIds).sorted() {
            if try row("SELECT 1 FROM play_orders WHERE app_id = $1 AND order_id = $2", .text(appId), .text(orderId))
                != nil
            {
                found.insert(orderId)
            }
        }
        return found
    }

    static let playTokenColumns = """
        t.app_id, t.purchase_token, t.kind, t.environment, t.product_id, t.linked_purchase_token, t.latest_read_at,
        t.latest_raw_json, t.latest_fact_json, t.acknowledged, t.acknowledgement_attempts, t.acknowledgement_error,
        t.acknowledgement_attempted_at, c.customer_id
        """

    static func playToken(_ row: SQLRow) throws(StoreError) -> PlayPurchaseTokenRecord {
        let kind = PlayFactKind(rawValue: try row.text(2)) ?? .subscription
        let factKind: FactKind = kind == .product ? .playProductPurchase : .playSubscription
        return PlayPurchaseTokenRecord(
            appId: try row.text(0), purchaseToken: try row.text(1), kind: kind,
            environment: environment(try row.optionalText(3)), productId: try row.text(4),
            linkedPurchaseToken: try row.optionalText(5), latestReadAt: try row.timestamp(6),
            latestRaw: try row.text(7), latestFact: try FactJSON(kind: factKind, json: try row.text(8)).decode(),
            isAcknowledged: try row.bool(9), acknowledgementAttempts: Int(try row.integer(10)),
            acknowledgementError: try row.optionalText(11), acknowledgementAttemptedAt: try row.optionalTimestamp(12),
            customerId: try row.optionalInteger(13))
    }

    func playPurchaseToken(appId: String, purchaseToken: String) throws -> PlayPurchaseTokenRecord? {
        try row(
            """
            SELECT \(Self.playTokenColumns)
            FROM play_purchase_tokens t
            LEFT JOIN customer_transactions c ON c.app_id = t.app_id AND c.original_transaction_id = t.purchase_token
            WHERE t.app_id = $1 AND t.purchase_token = $2
            """, .text(appId), .text(purchaseToken)
        ).map(Self.playToken)
    }

    func unacknowledgedPlayPurchases(appId: String, limit: Int) throws -> [PlayPurchaseTokenRecord] {
        try rows(
            """
            SELECT \(Self.playTokenColumns)
            FROM play_purchase_tokens t
            LEFT JOIN customer_transactions c ON c.app_id = t.app_id AND c.original_transaction_id = t.purchase_token
            WHERE t.app_id = $1 AND t.acknowledged = 0
            ORDER BY t.first_received_at, t.purchase_token LIMIT $2
            """, .text(appId), SQLValue(limit)
        ).map(Self.playToken)
    }

    func recordPlayAcknowledgement(
        appId: String, purchaseToken: String, acknowledged: Bool, error: String?, at: Timestamp
    ) throws {
        try execute(
            """
            UPDATE play_purchase_tokens
            SET acknowledgement_attempts = acknowledgement_attempts + 1, acknowledgement_attempted_at = $3,
                acknowledged = CASE WHEN $4 = 1 THEN 1 ELSE acknowledged END, acknowledgement_error = $5
            WHERE app_id = $1 AND purchase_token = $2
            """, .text(appId), .text(purchaseToken), SQLValue(at), SQLValue(acknowledged), SQLValue(error))
    }

    // MARK: RTDN pushes

    func insertPlayNotification(_ notification: NewPlayNotification) throws -> Insertion {
        let id = try insertReturningId(
            """
            INSERT INTO play_notifications (app_id, message_id, package_name, notification_kind, notification_type,
                                            purchase_token, event_time, body, received_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
            ON CONFLICT (app_id, message_id) DO NOTHING
            RETURNING id
            """,
            [
                .text(notification.appId), .text(notification.messageId), SQLValue(notification.packageName),
                .text(notification.kind), SQLValue(notification.notificationType),
                SQLValue(notification.purchaseToken), SQLValue(notification.eventTime), .text(notification.body),
                SQLValue(notification.receivedAt),
            ])
        return id.map(Insertion.inserted) ?? .duplicate
    }

    func finishPlayNotification(id: Int64, outcome: String, at: Timestamp) throws {
        try execute(
            "UPDATE play_notifications SET processed_at = $2, outcome = $3 WHERE id = $1", .integer(id), SQLValue(at),
            .text(outcome))
    }

    func playNotification(appId: String, messageId: String) throws -> PlayNotificationRecord? {
        try row(
            """
            SELECT id, app_id, message_id, notification_kind, notification_type, purchase_token, body, received_at,
                   processed_at, outcome
            FROM play_notifications WHERE app_id = $1 AND message_id = $2
            """, .text(appId), .text(messageId)
        ).map { row throws(StoreError) in
            PlayNotificationRecord(
                id: try row.integer(0), appId: try row.text(1), messageId: try row.text(2), kind: try row.text(3),
                notificationType: try row.optionalInteger(4), purchaseToken: try row.optionalText(5),
                body: try row.text(6), receivedAt: try row.timestamp(7), processedAt: try row.optionalTimestamp(8),
                outcome: try row.optionalText(9))
        }
    }
}
