import AppStoreModels
import Foundation
import Testing

@testable import Entitlements

/// `SharedMembers` under `TransactionFact` and `LifecycleEvent`: copies share a box until one
/// changes, and then only that copy changes; equality, hashing and coding are the members'.
@Suite struct SharedMembersTests {
    static let at = Timestamp(millisecondsSince1970: 1_767_225_600_000)

    @Test func aChangedCopyLeavesTheOriginalAsItWas() throws {
        let original = TransactionFact(
            transactionId: "t1", originalTransactionId: "o1", productId: "monthly", purchaseDate: Self.at,
            signedDate: Self.at, environment: .production, price: 9_990, currency: "USD")
        var copy = original
        #expect(copy == original)
        copy.price = 4_990
        copy.revocationDate = Self.at
        #expect(original.price == 9_990)
        #expect(original.revocationDate == nil)
        #expect(copy.price == 4_990)
        #expect(copy.revocationDate == Self.at)
        #expect(copy != original)
        copy.price = 9_990
        copy.revocationDate = nil
        // Equal members in two boxes: equal, and hashed alike.
        #expect(copy == original)
        #expect(copy.hashValue == original.hashValue)
        #expect(Set([copy, original]).count == 1)

        let event = LifecycleEvent(
            id: "RENEWAL/t1", type: .renewal, customerId: "c", environment: .production, occurredAt: Self.at,
            productId: "monthly", entitlementIds: ["pro"], summary: "renewed")
        var retold = event
        retold.summary = "renewed again"
        retold.afterFactGap = true
        #expect(event.summary == "renewed")
        #expect(event.afterFactGap == nil)
        #expect(retold.summary == "renewed again")
        #expect(retold.afterFactGap == true)
    }

    @Test func codingIsTheMembersInTheSameContainer() throws {
        let event = LifecycleEvent(
            id: "RENEWAL/t1", type: .renewal, customerId: "c", environment: .production, occurredAt: Self.at,
            productId: "monthly", entitlementIds: ["pro"], transactionId: "t1", summary: "renewed")
        let text = String(decoding: AppStoreJSON.foundationEncode(event), as: UTF8.self)
        #expect(
            text == """
                {"customerId":"c","entitlementIds":["pro"],"environment":"Production","id":"RENEWAL/t1",\
                "isResubscription":false,"occurredAt":1767225600000,"productId":"monthly","summary":"renewed",\
                "transactionId":"t1","type":"RENEWAL"}
                """)
        #expect(try JSONDecoder().decode(LifecycleEvent.self, from: Data(text.utf8)) == event)
    }
}
