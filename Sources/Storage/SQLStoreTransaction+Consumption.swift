import AppStoreModels

/// Consumption answers: consent and reports the app gave, and the answers sent (migration 0011).
extension SQLStoreTransaction {
    func consumptionConsent(appId: String, appUserId: String) throws -> Bool? {
        try row(
            "SELECT consented FROM consumption_consents WHERE app_id = $1 AND app_user_id = $2", .text(appId),
            .text(appUserId)
        )?.bool(0)
    }

    func consumptionReport(appId: String, transactionId: String) throws -> ConsumptionReport? {
        guard
            let found = try row(
                """
                SELECT delivery_status, consumption_percentage, recorded_at FROM consumption_reports
                WHERE app_id = $1 AND transaction_id = $2
                """, .text(appId), .text(transactionId))
        else { return nil }
        return ConsumptionReport(
            deliveryStatus: try found.text(0), consumptionPercentage: try found.optionalInteger(1).map { Int32($0) },
            recordedAt: try found.timestamp(2))
    }

    func consumptionAnswer(appId: String, notificationUUID: String) throws -> ConsumptionAnswerRecord? {
        guard
            let found = try row(
                """
                SELECT transaction_id, outcome, reason, request, answered_at, refund_outcome, refund_outcome_at
                FROM consumption_answers WHERE app_id = $1 AND notification_uuid = $2
                """, .text(appId), .text(notificationUUID))
        else { return nil }
        return ConsumptionAnswerRecord(
            appId: appId, notificationUUID: notificationUUID, transactionId: try found.text(0),
            outcome: try found.text(1), reason: try found.optionalText(2), request: try found.optionalText(3),
            answeredAt: try found.timestamp(4), refundOutcome: try found.optionalText(5),
            refundOutcomeAt: try found.optionalTimestamp(6))
    }

    func recordConsumptionConsent(appId: String, appUserId: String, consented: Bool, at: Timestamp) throws {
        _ = try execute(
            """
            INSERT INTO consumption_consents (app_id, app_user_id, consented, recorded_at) VALUES ($1, $2, $3, $4)
            ON CONFLICT (app_id, app_user_id) DO UPDATE SET consented = $3, recorded_at = $4
            """, .text(appId), .text(appUserId), SQLValue(consented), SQLValue(at))
    }

    func recordConsumptionReport(appId: String, transactionId: String, report: ConsumptionReport) throws {
        _ = try execute(
            """
            INSERT INTO consumption_reports (app_id, transaction_id, delivery_status, consumption_percentage, recorded_at)
            VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (app_id, transaction_id)
            DO UPDATE SET delivery_status = $3, consumption_percentage = $4, recorded_at = $5
            """, .text(appId), .text(transactionId), .text(report.deliveryStatus),
            SQLValue(report.consumptionPercentage.map { Int64($0) }), SQLValue(report.recordedAt))
    }

    func recordConsumptionAnswer(_ answer: ConsumptionAnswerRecord) throws -> Bool {
        try execute(
            """
            INSERT INTO consumption_answers
                (app_id, notification_uuid, transaction_id, outcome, reason, request, answered_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            ON CONFLICT (app_id, notification_uuid) DO NOTHING
            """, .text(answer.appId), .text(answer.notificationUUID), .text(answer.transactionId),
            .text(answer.outcome), SQLValue(answer.reason), SQLValue(answer.request), SQLValue(answer.answeredAt)) > 0
    }

    func linkConsumptionOutcome(appId: String, transactionId: String, outcome: String, at: Timestamp) throws -> Int {
        try execute(
            """
            UPDATE consumption_answers SET refund_outcome = $3, refund_outcome_at = $4
            WHERE app_id = $1 AND transaction_id = $2 AND refund_outcome IS NULL
            """, .text(appId), .text(transactionId), .text(outcome), SQLValue(at))
    }
}
