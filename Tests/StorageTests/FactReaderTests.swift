import AppStoreModels
import Entitlements
import Foundation
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// The App Store facts read straight from their stored text are the facts Foundation decodes
/// from it; a text of another shape is left to the general decoding, with the same answer.
@Suite struct FactReaderTests {
    static func read(_ fact: Fact, _ text: String) -> Fact? {
        switch fact {
        case .transaction: ColumnJSONReader.transaction(from: text).map(Fact.transaction)
        case .renewalInfo: ColumnJSONReader.renewal(from: text).map(Fact.renewalInfo)
        case .notification: ColumnJSONReader.notification(from: text).map(Fact.notification)
        default: nil
        }
    }

    static func stored(_ fact: Fact) -> (kind: FactKind, text: String)? {
        switch fact {
        case .transaction(let value): (.transaction, ColumnJSON.encode(value))
        case .renewalInfo(let value): (.renewalInfo, ColumnJSON.encode(value))
        case .notification(let value): (.notification, ColumnJSON.encode(value))
        default: nil
        }
    }

    @Test func storedFactsReadBackExactly() throws {
        let facts =
            ColumnJSONTests.sampleFacts + F.notifications(customers: 5, perCustomer: 8).flatMap(\.facts)
        var kinds: Set<FactKind> = []
        for fact in facts {
            let (kind, text) = try #require(Self.stored(fact))
            kinds.insert(kind)
            #expect(Self.read(fact, text) == fact, "\(text)")
            #expect(try FactJSON(kind: kind, json: text).decode() == fact, "\(text)")
        }
        #expect(kinds == [.transaction, .renewalInfo, .notification])
    }

    /// Each text is the general decoding's (the reader gives up): the store answers what
    /// Foundation answers, a fact or an error.
    @Test func otherShapesAreLeftToTheGeneralDecoding() throws {
        let transaction =
            #""environment":"Production","isUpgraded":false,"originalTransactionId":"o","ownership":"PURCHASED","periodType":"NORMAL","productId":"p","purchaseDate":1000,"quantity":1,"signedDate":2000,"transactionId":"t""#
        let renewal =
            #""environment":"Sandbox","isInBillingRetryPeriod":true,"originalTransactionId":"o","productId":"p","signedDate":5"#
        let notification = #""environment":"Sandbox","notificationId":"n","signedDate":5,"type":"DID_RENEW""#
        let cases: [(FactKind, String)] = [
            (.transaction, "{\(transaction),\"note\":1}"),  // a member Foundation ignores
            (.transaction, "{\(transaction),\"price\":null}"),  // null for absent
            (.transaction, "{\(transaction.replacingOccurrences(of: "1000", with: "1000.5"))}"),  // a fraction
            (
                .transaction,
                "{\(transaction.replacingOccurrences(of: "\"quantity\":1", with: "\"quantity\":1,\"quantity\":2"))}"
            ),
            (.transaction, "{\(transaction.replacingOccurrences(of: "NORMAL", with: "FUTURE"))}"),  // errors
            (.transaction, "{\(transaction.replacingOccurrences(of: ",\"quantity\":1", with: ""))}"),
            (.transaction, "{\(transaction),\"revocationReason\":4294967296}"),
            (.renewalInfo, "{\(renewal),\"autoRenewEnabled\":null}"),
            (.renewalInfo, "{\(renewal.replacingOccurrences(of: "true", with: "1"))}"),
            (.renewalInfo, "{\(renewal.replacingOccurrences(of: "\"productId\"", with: "\"product\\u0049d\""))}"),
            (.notification, "{\(notification),\"subtype\":null}"),
            (.notification, "{\(notification.replacingOccurrences(of: "Sandbox", with: "Elsewhere"))}"),
            (.notification, "[{\(notification)}]"),
        ]
        var decoded = 0
        for (kind, text) in cases {
            let foundation: Fact? =
                switch kind {
                case .transaction:
                    (try? AppStoreJSON.decode(TransactionFact.self, from: Data(text.utf8))).map(Fact.transaction)
                case .renewalInfo:
                    (try? AppStoreJSON.decode(RenewalFact.self, from: Data(text.utf8))).map(Fact.renewalInfo)
                default:
                    (try? AppStoreJSON.decode(NotificationFact.self, from: Data(text.utf8))).map(Fact.notification)
                }
            let reader: Fact? =
                switch kind {
                case .transaction: ColumnJSONReader.transaction(from: text).map(Fact.transaction)
                case .renewalInfo: ColumnJSONReader.renewal(from: text).map(Fact.renewalInfo)
                default: ColumnJSONReader.notification(from: text).map(Fact.notification)
                }
            #expect(reader == nil, "\(text)")
            #expect((try? FactJSON(kind: kind, json: text).decode()) == foundation, "\(text)")
            if foundation != nil { decoded += 1 }
        }
        // Foundation reads the ignored member, the nulls, the fraction and the escaped key.
        #expect(decoded >= 6)
    }
}
