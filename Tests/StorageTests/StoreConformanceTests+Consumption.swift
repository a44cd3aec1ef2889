import AppStoreModels
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionWorkload

/// Consumption answers' storage (migration `0011_consumption`) on both engines: the latest
/// consent and report replace earlier ones; an answer is recorded once; a refund decision is
/// linked once, to the answers of its transaction only.
extension StoreConformanceTests {
    @Test("consent, reports and answers; refund decisions linked once", arguments: Backend.enabled)
    func consumptionAnswers(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await store.write { tx in
                _ = try tx.insertApp(F.app, at: F.at(0))
                try tx.recordConsumptionConsent(appId: F.appId, appUserId: "alice", consented: true, at: F.at(1))
                try tx.recordConsumptionConsent(appId: F.appId, appUserId: "alice", consented: false, at: F.at(2))
                try tx.recordConsumptionReport(
                    appId: F.appId, transactionId: "100",
                    report: ConsumptionReport(
                        deliveryStatus: "DELIVERED", consumptionPercentage: 5, recordedAt: F.at(1)))
                try tx.recordConsumptionReport(
                    appId: F.appId, transactionId: "100",
                    report: ConsumptionReport(
                        deliveryStatus: "UNDELIVERED_OTHER", consumptionPercentage: nil, recordedAt: F.at(2)))
                let sent = ConsumptionAnswerRecord(
                    appId: F.appId, notificationUUID: "n1", transactionId: "100", outcome: "sent", reason: nil,
                    request: #"{"customerConsented":true}"#, answeredAt: F.at(3))
                #expect(try tx.recordConsumptionAnswer(sent))
                var again = sent
                again.outcome = "withheld"
                #expect(try tx.recordConsumptionAnswer(again) == false)
                #expect(
                    try tx.recordConsumptionAnswer(
                        ConsumptionAnswerRecord(
                            appId: F.appId, notificationUUID: "n2", transactionId: "200", outcome: "withheld",
                            reason: "consumption.consentRefused: no", request: nil, answeredAt: F.at(3))))
                #expect(
                    try tx.linkConsumptionOutcome(appId: F.appId, transactionId: "100", outcome: "REFUND", at: F.at(4))
                        == 1)
                #expect(
                    try tx.linkConsumptionOutcome(
                        appId: F.appId, transactionId: "100", outcome: "REFUND_DECLINED", at: F.at(5)) == 0)
            }
            let (consent, unknown, report, first, second) = try await store.read { reader in
                (
                    try reader.consumptionConsent(appId: F.appId, appUserId: "alice"),
                    try reader.consumptionConsent(appId: F.appId, appUserId: "bob"),
                    try reader.consumptionReport(appId: F.appId, transactionId: "100"),
                    try reader.consumptionAnswer(appId: F.appId, notificationUUID: "n1"),
                    try reader.consumptionAnswer(appId: F.appId, notificationUUID: "n2")
                )
            }
            #expect(consent == false)
            #expect(unknown == nil)
            #expect(
                report
                    == ConsumptionReport(
                        deliveryStatus: "UNDELIVERED_OTHER", consumptionPercentage: nil, recordedAt: F.at(2)))
            #expect(
                first
                    == ConsumptionAnswerRecord(
                        appId: F.appId, notificationUUID: "n1", transactionId: "100", outcome: "sent", reason: nil,
                        request: #"{"customerConsented":true}"#, answeredAt: F.at(3), refundOutcome: "REFUND",
                        refundOutcomeAt: F.at(4)))
            #expect(second?.refundOutcome == nil)
            #expect(second?.reason == "consumption.consentRefused: no")
        }
    }
}
