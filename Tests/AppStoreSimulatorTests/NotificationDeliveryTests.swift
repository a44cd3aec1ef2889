import AppStoreModels
import AppStoreSimulator
import AppStoreTrust
import Foundation
import Testing

/// Delivery on a manual clock: Apple's retry schedule, history with send attempts, lost
/// notifications, V1 notifications.
@Suite struct NotificationDeliveryTests {
    @Test func retriesOnAppleSchedule() async throws {
        let transport = RecordingTransport { _ in .unsuccessfulHttpResponseCode }
        let fixture = try await SimulatorFixture(transport: transport)
        try await fixture.act(.purchase, "carol", "lifetime")
        #expect(transport.count == 1)
        var expected = [SimulatorFixture.start]
        for hours in NotificationRetrySchedule.appleHours {
            fixture.clock.advance(milliseconds: Int64(hours * 3_600_000) - 1)
            await fixture.simulator.tick()
            #expect(transport.count == expected.count, "no retry before \(hours) h")
            fixture.clock.advance(milliseconds: 1)
            await fixture.simulator.tick()
            expected.append(fixture.clock.now)
            #expect(transport.count == expected.count)
        }
        fixture.clock.advance(milliseconds: 365 * 86_400_000)
        await fixture.simulator.tick()
        #expect(transport.count == 6)
        let notification = try #require(await fixture.simulator.producedNotifications().first)
        #expect(notification.sendAttempts.map(\.attemptDate) == expected.map { Optional($0) })
        #expect(notification.sendAttempts.allSatisfy { $0.sendAttemptResult == .unsuccessfulHttpResponseCode })
    }

    @Test func accelerationScalesTheSchedule() {
        let schedule = NotificationRetrySchedule(scale: .accelerated(monthSeconds: 300))
        let start = Timestamp(millisecondsSince1970: 0)
        // 72 hours of a 720-hour month compressed to 300 s: 30 s.
        #expect(schedule.nextAttempt(after: start, failedAttempts: 5) == Timestamp(millisecondsSince1970: 30_000))
        #expect(schedule.nextAttempt(after: start, failedAttempts: 6) == nil)
    }

    @Test func recoversAfterFailureAndHistoryFiltersFailures() async throws {
        let transport = RecordingTransport { $0 == 0 ? .timedOut : .success }
        let fixture = try await SimulatorFixture(transport: transport)
        try await fixture.act(.purchase, "carol", "lifetime")
        try await fixture.act(.purchase, "carol", "coins")
        let request = NotificationHistoryRequest(
            startDate: SimulatorFixture.start, endDate: SimulatorFixture.start.adding(milliseconds: 86_400_000 * 30),
            onlyFailures: true)
        let failing = try await fixture.simulator.notificationHistory(
            bundleId: SimulatorFixture.bundleId, request: request, paginationToken: nil)
        #expect(failing.notificationHistory?.count == 1)
        fixture.clock.advance(milliseconds: 3_600_000)
        await fixture.simulator.tick()
        let after = try await fixture.simulator.notificationHistory(
            bundleId: SimulatorFixture.bundleId, request: request, paginationToken: nil)
        #expect(after.notificationHistory?.isEmpty == true)
        let all = await fixture.simulator.producedNotifications()
        #expect(all[0].sendAttempts.map { $0.sendAttemptResult?.rawValue } == ["TIMED_OUT", "SUCCESS"])
    }

    @Test func lostNotificationsStayLostButInHistory() async throws {
        let transport = RecordingTransport()
        let fixture = try await SimulatorFixture(transport: transport)
        await fixture.simulator.setLossPolicy(NotificationLossPolicy(fraction: 1))
        try await fixture.act(.purchase, "carol", "lifetime")
        fixture.clock.advance(milliseconds: 10 * 86_400_000)
        await fixture.simulator.tick()
        #expect(transport.count == 0)
        let request = NotificationHistoryRequest(
            startDate: SimulatorFixture.start, endDate: fixture.clock.now, onlyFailures: true)
        let lost = try await fixture.simulator.notificationHistory(
            bundleId: SimulatorFixture.bundleId, request: request, paginationToken: nil)
        #expect(lost.notificationHistory?.count == 1)
        #expect(await fixture.simulator.producedNotifications().first?.lost == true)
    }

    /// Apple keeps notification history 180 days in Production and 30 in Sandbox: a start date
    /// further back is refused, as Apple refuses it.
    @Test(arguments: [(AppStoreEnvironment.sandbox, Int64(30)), (.production, 180)])
    func historyLookBackIsAppleLimit(environment: AppStoreEnvironment, days: Int64) async throws {
        let fixture = try await SimulatorFixture(environment: environment)
        let day: Int64 = 86_400_000
        fixture.clock.advance(milliseconds: 200 * day)
        let now = fixture.clock.now
        func history(from start: Timestamp) async throws(SimulatorError) -> NotificationHistoryResponse {
            try await fixture.simulator.notificationHistory(
                bundleId: SimulatorFixture.bundleId,
                request: NotificationHistoryRequest(startDate: start, endDate: now),
                paginationToken: nil)
        }
        _ = try await history(from: now.adding(milliseconds: -days * day))
        do throws(SimulatorError) {
            _ = try await history(from: now.adding(milliseconds: -days * day - 1))
            Issue.record("a start date \(days) days and 1 ms back was accepted")
        } catch {
            #expect(error.apiErrorCode == APIError.startDateTooFarInPast.rawValue)
        }
    }

    @Test func sendsV1WithUnifiedReceipt() async throws {
        let transport = RecordingTransport()
        let fixture = try await SimulatorFixture(transport: transport)
        try await fixture.simulator.setNotificationURL(
            bundleId: SimulatorFixture.bundleId, v2: "http://127.0.0.1:9/v2", v1: "http://127.0.0.1:9/v1")
        try await fixture.act(.purchase, "carol", "monthly")
        try await fixture.act(.renew, "carol", "monthly")
        let v1 = await fixture.simulator.v1Notifications()
        #expect(v1.map(\.type) == ["INITIAL_BUY", "DID_RENEW"])
        let body = try AppStoreJSON.decode(ResponseBodyV1.self, from: v1[1].body)
        #expect(body.unifiedReceipt?.latestReceiptInfo?.count == 2)
        #expect(body.unifiedReceipt?.status == .valid)
        #expect(body.password == "shared-secret")
        #expect(v1.allSatisfy { $0.delivered })
    }
}
