import AppStoreModels
import Entitlements
import Foundation
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// Lifecycle events read straight from their stored text are the events Foundation decodes
/// from it; a text of another shape is left to the general decoding, with the same answer.
@Suite struct EventReaderTests {
    /// Every member set (awkward strings, negative and extreme money, a product change withdrawn,
    /// kept or with no answer), none set, and each optional member alone.
    static var events: [LifecycleEvent] {
        let full = ColumnJSONTests.fullEvent
        var events = [full]
        for withdrawn in [true, false] {
            var change = full
            change.productChange?.isWithdrawn = withdrawn
            events.append(change)
        }
        let bare = LifecycleEvent(
            id: "", type: .eventRetracted, customerId: "", environment: .production, occurredAt: F.at(0),
            productId: "", entitlementIds: [], summary: "")
        events.append(bare)
        let setters: [(inout LifecycleEvent) -> Void] = [
            { $0.transactionId = full.transactionId }, { $0.originalTransactionId = full.originalTransactionId },
            { $0.periodType = full.periodType }, { $0.price = full.price },
            { $0.commissionPercent = full.commissionPercent }, { $0.proceeds = full.proceeds },
            { $0.expiresDate = full.expiresDate }, { $0.expirationReason = full.expirationReason },
            { $0.refundReason = full.refundReason }, { $0.productChange = full.productChange },
            { $0.offerIdentifier = full.offerIdentifier }, { $0.priceIncreaseConsent = full.priceIncreaseConsent },
            { $0.gracePeriodExpiresDate = full.gracePeriodExpiresDate }, { $0.afterFactGap = true },
            { $0.retractedEventId = "x" }, { $0.store = .appStore }, { $0.isResubscription = true },
        ]
        for set in setters {
            var event = bare
            set(&event)
            events.append(event)
        }
        return events
    }

    @Test func storedEventsReadBackExactly() throws {
        let events = Self.events
        #expect(events.count == 21)
        for event in events {
            let text = ColumnJSON.event(event)
            #expect(ColumnJSONReader.event(from: text) == event, "\(text)")
            #expect(try AppStoreJSON.decode(LifecycleEvent.self, from: Data(text.utf8)) == event, "\(text)")
            #expect(try SQLStoreTransaction.event(text) == event, "\(text)")
        }
    }

    /// Each text is the general decoding's (the reader gives up): the store answers what
    /// Foundation answers, an event or an error.
    @Test func otherShapesAreLeftToTheGeneralDecoding() throws {
        let event =
            #""customerId":"c","entitlementIds":["pro"],"environment":"Sandbox","id":"RENEWAL/1","isResubscription":false,"occurredAt":1000,"productId":"p","summary":"s","type":"RENEWAL""#
        let cases = [
            "{\(event),\"note\":1}",  // a member Foundation ignores
            "{\(event),\"price\":null}",  // null for absent
            "{\(event.replacingOccurrences(of: "1000", with: "1000.5"))}",  // a fraction
            "{\(event.replacingOccurrences(of: "\"summary\":\"s\"", with: "\"summary\":\"s\",\"summary\":\"t\""))}",
            "{\(event.replacingOccurrences(of: "\"RENEWAL\"", with: "\"FUTURE\""))}",  // errors
            "{\(event.replacingOccurrences(of: ",\"summary\":\"s\"", with: ""))}",  // errors
            "{\(event),\"price\":{\"currency\":\"USD\",\"milliunits\":1,\"scale\":3}}",
            "{\(event),\"price\":{\"milliunits\":1}}",  // errors
            "{\(event),\"productChange\":{\"effectiveAt\":1,\"fromProductId\":\"a\",\"kind\":\"UPGRADE\",\"timing\":\"IMMEDIATE\",\"toProductId\":\"b\",\"isWithdrawn\":null}}",
            "{\(event),\"commissionPercent\":9223372036854775808}",  // errors
            "{\(event.replacingOccurrences(of: "\"productId\"", with: "\"product\\u0049d\""))}",
            "{\(event.replacingOccurrences(of: "false", with: "0"))}",  // errors
            "[{\(event)}]",  // errors
        ]
        var decoded = 0
        for text in cases {
            let foundation = try? AppStoreJSON.decode(LifecycleEvent.self, from: Data(text.utf8))
            #expect(ColumnJSONReader.event(from: text) == nil, "\(text)")
            #expect((try? SQLStoreTransaction.event(text)) == foundation, "\(text)")
            if foundation != nil { decoded += 1 }
        }
        // Foundation reads the ignored members, the nulls, the fraction, the repeated and the
        // escaped keys.
        #expect(decoded == 7)
    }
}
