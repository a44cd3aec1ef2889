import AppStoreModels
import Entitlements
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// `ColumnJSONReader` must give exactly what `AppStoreJSON.decode` gives, or give up.
@Suite("Column JSON reader")
struct ColumnJSONReaderTests {
    /// `text` read both ways: the reader answers (or gives up, when `fast` is false) and its
    /// value is Foundation's (compared as their canonical encodings, and by `==` when it can).
    static func same<T: Codable>(_ type: T.Type, _ text: String, _ comment: Comment? = nil, fast: Bool = true) {
        let read = ColumnJSONReader.decode(T.self, from: text)
        #expect((read != nil) == fast, comment)
        guard let read else { return }
        let foundation = try? AppStoreJSON.decode(T.self, from: Data(text.utf8))
        #expect(foundation != nil, comment)
        #expect(foundation.map { ColumnJSON.encode($0) } == ColumnJSON.encode(read), comment)
    }

    static func same<T: Codable & Equatable>(_ value: T, _ comment: Comment? = nil) {
        let text = ColumnJSON.encode(value)
        same(T.self, text, comment)
        #expect(ColumnJSONReader.decode(T.self, from: text) == value, comment)
    }

    @Test("transaction, renewal and notification facts, all fields and none")
    func facts() {
        for fact in ColumnJSONTests.sampleFacts {
            switch fact {
            case .transaction(let value): Self.same(value)
            case .renewalInfo(let value): Self.same(value)
            case .notification(let value): Self.same(value)
            default: Issue.record("no sample of \(fact)")
            }
        }
    }

    @Test("customer states, what the next evaluation reads of them, and lifecycle events")
    func derived() {
        let notifications = F.notifications(customers: 10, perCustomer: 10)
        var events = 0
        for (appUserId, own) in Dictionary(grouping: notifications, by: \.appUserId) {
            let evaluation = EntitlementEngine.evaluate(
                customerId: appUserId, environment: .production, facts: own.flatMap(\.facts), catalog: F.catalog,
                now: F.now)
            let text = ColumnJSON.encode(evaluation.customerInfo)
            Self.same(evaluation.customerInfo, "\(appUserId)")
            #expect(
                ColumnJSONReader.decode(PreviousEvaluation.self, from: text)
                    == (try? AppStoreJSON.decode(PreviousEvaluation.self, from: Data(text.utf8))), "\(appUserId)")
            #expect(ColumnJSONReader.decode(PreviousEvaluation.self, from: text) != nil)
            for event in evaluation.allEvents { Self.same(event, "\(appUserId) \(event.id)") }
            events += evaluation.allEvents.count
        }
        #expect(events > 0)
    }

    @Test("analytics contributions as stored, catalog, plain values")
    func storedValues() {
        let key = AnalyticsDailyKey(
            day: CalendarDay(daysSince1970: 20_000), productId: "p\u{1}é", subscriptionGroup: "g", storefront: "USA",
            currency: "USD")
        let play = AnalyticsDailyKey(
            day: CalendarDay(daysSince1970: 20_001), productId: "p", subscriptionGroup: "g", storefront: "USA",
            currency: "USD", store: .googlePlay)
        let entries = [
            SQLStoreTransaction.StoredContribution(key: key, values: [1, -2, 0, .max, .min]),
            SQLStoreTransaction.StoredContribution(key: play, values: []),
        ]
        Self.same([SQLStoreTransaction.StoredContribution].self, ColumnJSON.encode(entries))
        Self.same(F.catalog)
        Self.same(["b": 2, "a": 1, "A": 0, "ab": 3, "": 4])
        // Swift finds "\u{212A}ind" (a Kelvin sign) equal to "Kind"; bytes do not.
        Self.same([String: Int].self, ColumnJSON.encode(["é": 4]), "a key outside ASCII", fast: false)
        Self.same(
            Keyed.self, #"{"\#u{212A}ind":1}"#, "a key canonically equal to the one asked for", fast: false)
        Self.same([String: Int].self, ColumnJSON.encode(["a\u{0}": 4]), "a key written with an escape", fast: false)
        Self.same([Int?.none, 1, nil])
        Self.same([[String]]())
        Self.same(ColumnJSONTests.awkward)
        Self.same(Int64.min)
        Self.same(Int64.max)
        Self.same([Int8(-1): "x"], "integer-keyed dictionaries")
        // JSONValue tries one type after another, catching each failure: left to Foundation.
        Self.same(
            JSONValue.self, ColumnJSON.encode(JSONValue.object(["a": .array([.null, .bool(true), .integer(-3)])])),
            fast: false)
    }

    @Test("written otherwise than ColumnJSON writes: escapes, whitespace, numbers, repeated keys, bad JSON")
    func edges() throws {
        // Escapes Foundation reads: every short one, \u of every width, a surrogate pair.
        Self.same(String.self, #""\"\\\/\b\f\n\r\t\u0041\u00e9\u20AC\ud83d\ude00""#)
        Self.same([String: Int].self, " { \"a\" : 1 ,\n\t\"b\":[2][0] } ", "not JSON", fast: false)
        Self.same([String: [Int]].self, " { \"a\" : [ 1 , -0 ] ,\n\t\"b\":[] } ")
        // Left to Foundation.
        Self.same(String.self, #""\ud83d""#, "a lone surrogate", fast: false)
        Self.same(String.self, #""\u12""#, "a short escape", fast: false)
        Self.same(String.self, "\"a\u{1}\"", "an unescaped control character", fast: false)
        Self.same(Int.self, "1.0", "a fraction", fast: false)
        Self.same(Int.self, "1e2", "an exponent", fast: false)
        Self.same(UInt64.self, "18446744073709551615", "past Int64", fast: false)
        Self.same(Int8.self, "128", "out of range", fast: false)
        Self.same(Int.self, "01", "a leading zero", fast: false)
        Self.same([String: Int].self, #"{"a":1,"a":2}"#, "a repeated key", fast: false)
        Self.same([String: Int].self, #"{"\u0061":1}"#, "an escaped key", fast: false)
        Self.same([Int].self, "[1,]", "a trailing comma", fast: false)
        Self.same([Int].self, "[1] x", "text after the value", fast: false)
        Self.same(Bool.self, "1", "a number for a boolean", fast: false)
        Self.same(Date.self, "0", "a date", fast: false)
        Self.same(Data.self, #""AQID""#, "data", fast: false)
        Self.same(Double.self, "1", "floating point", fast: false)
        Self.same(Data.self, "[1,2]", "data at the top level", fast: false)
        Self.same(URL.self, #"{"relative":"x"}"#, "a URL at the top level", fast: false)
        Self.same(Int128.self, "1", "a 128-bit integer", fast: false)
        Self.same(
            [Int].self, String(repeating: "[", count: 200) + String(repeating: "]", count: 200), "too deep",
            fast: false)
        // A type that catches the reader's error and goes on is read by Foundation.
        #expect(ColumnJSONReader.decode(Lenient.self, from: #"{"n":1.5}"#) == nil)
        #expect(ColumnJSONReader.decode(Lenient.self, from: #"{"n":2}"#)?.n == 2)
        #expect(try AppStoreJSON.decode(Lenient.self, from: Data(#"{"n":1.5}"#.utf8)).n == -1)
    }

    struct Keyed: Codable {
        var kind: Int?
        enum CodingKeys: String, CodingKey { case kind = "Kind" }
    }

    struct Lenient: Codable {
        var n: Int
        enum CodingKeys: CodingKey { case n }
        init(from decoder: any Decoder) throws {
            n = (try? decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .n)) ?? -1
        }
    }

    /// A stored column reads through the reader (and still refuses what does not decode).
    @Test func storedColumnsReadThroughIt() throws {
        let fact = TransactionFact(
            transactionId: "t", originalTransactionId: "o", productId: "p", purchaseDate: F.at(0),
            signedDate: F.at(0), environment: .production)
        let row = FactJSON(kind: .transaction, json: ColumnJSON.encode(fact))
        #expect(try row.decode() == .transaction(fact))
        #expect(throws: StoreError.self) { try FactJSON(kind: .transaction, json: "{\"a\":1}").decode() }
    }
}
