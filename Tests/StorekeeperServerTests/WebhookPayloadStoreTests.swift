import AppStoreModels
import Entitlements
import Foundation
import Testing

@testable import Storage
@testable import StorekeeperServer

/// Issue 15: a webhook says which store its event comes from; App Store webhooks are unchanged.
@Suite struct WebhookPayloadStoreTests {
    @Test func playEventsCarryTheStoreAndAppStoreEventsDoNot() {
        var event = LifecycleEvent(
            id: "RENEWAL/GPA.1..0", type: .renewal, customerId: "alice", environment: .production,
            occurredAt: Timestamp(millisecondsSince1970: 1_767_225_600_000), productId: "monthly",
            entitlementIds: ["pro"], transactionId: "GPA.1..0", originalTransactionId: "tok-1", summary: "renewed")
        func payload() -> (WebhookPayload, String) {
            let stored = StoredEvent(
                sequence: 7, customerId: 1, event: event, createdAt: Timestamp(millisecondsSince1970: 1_767_225_600_000)
            )
            let payload = WebhookPayload(event: stored, appId: "app-1", customer: nil, customerInfo: nil)
            return (payload, String(decoding: AppStoreJSON.encode(payload), as: UTF8.self))
        }
        let (apple, appleJSON) = payload()
        #expect(apple.store == nil)
        #expect(!appleJSON.contains("\"store\""))
        event.store = .playStore
        let (play, playJSON) = payload()
        #expect(play.store == .playStore)
        #expect(playJSON.components(separatedBy: "\"store\":\"play_store\"").count == 3)
    }
}
