import AppStoreModels
import AppStoreTrust
import Foundation

/// Signing, delivery and history of server notifications.
extension AppStoreSimulator {
    /// Signs what the store model queued and stores it for delivery (now) and history.
    func signPending(now: Timestamp) {
        for intent in state.takePending() {
            guard let app = state.apps[intent.bundleId] else { continue }
            do {
                try store(intent, app: app, now: now, testToken: nil)
            } catch {
                // Signing with the simulator's own key cannot fail short of a broken OpenSSL;
                // the notification is then missing, which the history makes visible.
                continue
            }
            if let url = app.notificationURLV1.flatMap(URL.init(string:)) {
                enqueueV1(intent, app: app, url: url, now: now)
            }
        }
    }

    @discardableResult
    func store(_ intent: NotificationIntent, app: SimulatedApp, now: Timestamp, testToken: String?)
        throws(SimulatorError) -> StoredNotification
    {
        var payload = ResponseBodyV2DecodedPayload()
        payload.notificationType = RawEnum(intent.type)
        payload.subtype = intent.subtype.map { RawEnum($0) }
        let uuid = UUID().uuidString.lowercased()
        payload.notificationUUID = uuid
        payload.version = "2.0"
        payload.signedDate = now
        if let summary = intent.summary {
            payload.summary = summary
        } else {
            var data = NotificationData()
            data.environment = RawEnum(environment)
            data.appAppleId = app.appAppleId
            data.bundleId = app.bundleId
            data.bundleVersion = app.bundleVersion
            if let transaction = intent.transaction { data.signedTransactionInfo = try signer.sign(transaction) }
            if let renewal = intent.renewalInfo { data.signedRenewalInfo = try signer.sign(renewal) }
            data.status = intent.status.map { RawEnum($0) }
            data.consumptionRequestReason = intent.consumptionRequestReason.map { RawEnum($0) }
            payload.data = data
        }
        notificationSequence += 1
        let stored = StoredNotification(
            uuid: uuid, bundleId: app.bundleId, customerId: intent.customerId, type: intent.type,
            subtype: intent.subtype, signedPayload: try signer.sign(payload), createdAt: now,
            originalTransactionId: intent.originalTransactionId,
            nextAttemptAt: app.notificationURL == nil ? nil : now, testNotificationToken: testToken,
            sequence: notificationSequence)
        notifications.append(stored)
        if stored.nextAttemptAt != nil { awaitingDelivery.insert(notifications.count - 1) }
        return stored
    }

    /// Attempts every notification whose next attempt is due, in order, recording each
    /// attempt and scheduling Apple's retries.
    func deliverDue() async {
        let now = clock.now
        for index in awaitingDelivery.sorted() {
            defer { if notifications[index].nextAttemptAt == nil { awaitingDelivery.remove(index) } }
            guard let due = notifications[index].nextAttemptAt, due <= now, !notifications[index].inFlight,
                let app = state.apps[notifications[index].bundleId],
                let url = app.notificationURL.flatMap(URL.init(string:))
            else { continue }
            if notifications[index].attempts.isEmpty, lossPolicy.fraction > 0,
                Double.random(in: 0..<1, using: &lossGenerator) < lossPolicy.fraction
            {
                notifications[index].attempts.append(
                    SendAttemptItem(attemptDate: now, sendAttemptResult: RawEnum(.noResponse)))
                notifications[index].lost = true
                notifications[index].nextAttemptAt = nil
                continue
            }
            notifications[index].inFlight = true
            let body = AppStoreJSON.encode(ResponseBodyV2(signedPayload: notifications[index].signedPayload))
            let result = await transport.post(body, to: url)
            notifications[index].inFlight = false
            notifications[index].attempts.append(SendAttemptItem(attemptDate: now, sendAttemptResult: RawEnum(result)))
            if result == .success {
                notifications[index].nextAttemptAt = nil
            } else {
                let failures = notifications[index].attempts.count
                notifications[index].nextAttemptAt = retrySchedule.nextAttempt(after: now, failedAttempts: failures)
            }
        }
        for index in v1Deliveries.indices {
            guard let due = v1Deliveries[index].nextAttemptAt, due <= now, !v1Deliveries[index].inFlight else {
                continue
            }
            v1Deliveries[index].inFlight = true
            let result = await transport.post(v1Deliveries[index].body, to: v1Deliveries[index].url)
            v1Deliveries[index].inFlight = false
            if result == .success {
                v1Deliveries[index].delivered = true
                v1Deliveries[index].nextAttemptAt = nil
            } else {
                v1Deliveries[index].failedAttempts += 1
                v1Deliveries[index].nextAttemptAt = retrySchedule.nextAttempt(
                    after: now, failedAttempts: v1Deliveries[index].failedAttempts)
            }
        }
    }

    // MARK: Server API: history and test notifications

    /// Get Notification History: 20 per page, filters as Apple applies them, a start date at
    /// most 180 days back in Production and 30 in Sandbox.
    public func notificationHistory(bundleId: String, request: NotificationHistoryRequest, paginationToken: String?)
        throws(SimulatorError) -> NotificationHistoryResponse
    {
        let now = clock.now
        guard let start = request.startDate else { throw .api(.invalidStartDate, "Invalid start date.") }
        guard let end = request.endDate else { throw .api(.invalidEndDate, "Invalid end date.") }
        guard start <= end else { throw .api(.startDateAfterEndDate, "Start date after end date.") }
        // Apple keeps 180 days of history in Production and 30 in Sandbox.
        let lookBackDays: Int64 = environment == .production ? 180 : 30
        guard start >= now.adding(milliseconds: -lookBackDays * 86_400_000) else {
            throw .api(.startDateTooFarInPast, "Start date too far in the past.")
        }
        if request.transactionId != nil, request.notificationType != nil {
            throw .api(.multipleFiltersSupplied, "Only one of notificationType and transactionId may be supplied.")
        }
        var originalTransactionId: String?
        if let transactionId = request.transactionId {
            guard StoreState.isTransactionIdShaped(transactionId) else {
                throw .api(.invalidTransactionId, "Invalid transaction id.")
            }
            guard let record = state.transactions[transactionId], record.bundleId == bundleId else {
                throw .api(.transactionIdNotFound, "Transaction id not found.")
            }
            originalTransactionId = record.originalTransactionId
        }
        if let type = request.notificationType, type.value == nil {
            throw .api(.invalidNotificationType, "Invalid notification type.")
        }
        var after = 0
        if let paginationToken {
            guard let cursor = RevisionToken.decode(paginationToken) else {
                throw .api(.invalidPaginationToken, "Invalid pagination token.")
            }
            after = cursor.1
        }
        let matching = notifications.filter { item in
            guard item.bundleId == bundleId, item.createdAt >= start, item.createdAt < end, item.sequence > after
            else { return false }
            if let type = request.notificationType, item.type.rawValue != type.rawValue { return false }
            if let subtype = request.notificationSubtype, item.subtype?.rawValue != subtype.rawValue { return false }
            if let originalTransactionId, item.originalTransactionId != originalTransactionId { return false }
            if request.onlyFailures == true, item.succeeded { return false }
            return true
        }
        let page = matching.prefix(StoreState.pageSize)
        let hasMore = matching.count > page.count
        return NotificationHistoryResponse(
            paginationToken: hasMore ? page.last.map { RevisionToken.encode(($0.createdAt, $0.sequence)) } : nil,
            hasMore: hasMore,
            notificationHistory: page.map {
                NotificationHistoryResponseItem(signedPayload: $0.signedPayload, sendAttempts: $0.attempts)
            })
    }

    /// Request a Test Notification: a `TEST` notification to the app's V2 URL.
    func requestTestNotification(bundleId: String) throws(SimulatorError) -> SendTestNotificationResponse {
        let app = try state.app(bundleId)
        guard app.notificationURL != nil else {
            throw .api(
                .serverNotificationUrlNotFound,
                "An error that indicates the App Store server couldn’t find a notifications URL for your app in this environment."
            )
        }
        let now = clock.now
        let token = UUID().uuidString.lowercased() + "_" + String(now.millisecondsSince1970)
        try store(
            NotificationIntent(
                bundleId: bundleId, customerId: nil, type: .test, subtype: nil, transaction: nil, renewalInfo: nil,
                status: nil, consumptionRequestReason: nil, summary: nil, originalTransactionId: nil, kind: nil),
            app: app, now: now, testToken: token)
        return SendTestNotificationResponse(testNotificationToken: token)
    }

    func testNotificationStatus(bundleId: String, token: String) throws(SimulatorError) -> CheckTestNotificationResponse
    {
        guard token.contains("_"), token.count <= 128 else {
            throw .api(.invalidTestNotificationToken, "Invalid test notification token.")
        }
        guard let item = notifications.first(where: { $0.testNotificationToken == token && $0.bundleId == bundleId })
        else { throw .api(.testNotificationNotFound, "Test notification not found.") }
        return CheckTestNotificationResponse(signedPayload: item.signedPayload, sendAttempts: item.attempts)
    }
}
