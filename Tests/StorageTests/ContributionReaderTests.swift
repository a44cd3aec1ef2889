import AppStoreModels
import Entitlements
import Foundation
import Testing

@testable import Storage

/// The analytics contributions read straight from the parsed text give exactly what Foundation
/// decodes from it, and any text of another shape is left to the general decoding.
@Suite struct ContributionReaderTests {
    typealias Entry = SQLStoreTransaction.StoredContribution

    static let texts = ["", "USD", ColumnJSONTests.awkward, "\u{1F}a\"b", "ε/δ"]
    static let days: [Int64] = [0, 20_454, 2_932_896]

    /// Entries over awkward and plain texts, both stores, extreme values and none.
    static func entries(_ count: Int) -> [Entry] {
        (0..<count).map { index in
            Entry(
                key: AnalyticsDailyKey(
                    day: CalendarDay(daysSince1970: days[index % days.count]), productId: texts[index % texts.count],
                    subscriptionGroup: texts[(index + 1) % texts.count], storefront: texts[(index + 2) % texts.count],
                    currency: texts[(index + 3) % texts.count],
                    store: AnalyticsStore.allCases[index % AnalyticsStore.allCases.count]),
                values: [[], [0], [Int64.min, Int64.max, -1], [9_990, 7]][index % 4])
        }
    }

    /// The entries as pairs, for comparison (`StoredContribution` is not `Equatable`).
    static func pairs(_ entries: [Entry]?) -> [String]? {
        entries?.map { "\($0.key) \($0.values)" }
    }

    static func foundation(_ text: String) -> [Entry]? {
        try? AppStoreJSON.decode([Entry].self, from: Data(text.utf8))
    }

    @Test func dailyEntriesReadAsFoundationReadsThem() throws {
        for count in [0, 1, 2, 7, 40] {
            let entries = Self.entries(count)
            // As the store writes it: the entries' own texts joined.
            let text = "[" + entries.map(ColumnJSON.contribution).joined(separator: ",") + "]"
            #expect(text == AppStoreJSON.encodeText(entries))
            let read = try #require(ColumnJSONReader.contributions(from: text), "\(count)")
            #expect(Self.pairs(read) == Self.pairs(entries))
            #expect(Self.pairs(read) == Self.pairs(Self.foundation(text)))
            #expect(read.map(\.key.store) == entries.map(\.key.store))
        }
        // Padding after the value (`keepingStoredSize`) is whitespace JSON allows.
        let padded = "[" + ColumnJSON.contribution(Self.entries(1)[0]) + "]" + String(repeating: " ", count: 300)
        #expect(Self.pairs(ColumnJSONReader.contributions(from: padded)) == Self.pairs(Self.entries(1)))
    }

    @Test func cohortsReadAsFoundationReadsThem() throws {
        var contribution = SQLStoreTransaction.StoredCohortContribution(CohortContribution())
        #expect(ColumnJSONReader.cohorts(from: ColumnJSON.cohorts(contribution)) == contribution)
        for (index, text) in Self.texts.enumerated() {
            let month = CalendarDay(daysSince1970: Self.days[index % Self.days.count])
            contribution.retention.append(
                .init(
                    key: RetentionCohortKey(
                        cohortMonth: month, productId: text, subscriptionGroup: Self.texts[(index + 1) % 5],
                        storefront: Self.texts[(index + 2) % 5], paidRenewals: Int64(index) - 2),
                    subscriptions: [Int64.min, -1, 0, 1, Int64.max][index]))
            contribution.ltv.append(
                .init(
                    key: LTVCohortKey(
                        cohortMonth: month, productId: Self.texts[(index + 3) % 5], subscriptionGroup: text,
                        storefront: Self.texts[(index + 4) % 5],
                        day: CalendarDay(daysSince1970: Self.days[(index + 1) % Self.days.count]), currency: text),
                    values: [[], [0], [Int64.min, Int64.max, -1]][index % 3]))
            let stored = ColumnJSON.cohorts(contribution)
            #expect(ColumnJSONReader.cohorts(from: stored) == contribution)
            #expect(
                try AppStoreJSON.decode(SQLStoreTransaction.StoredCohortContribution.self, from: Data(stored.utf8))
                    == contribution)
        }
    }

    /// Texts of another shape: the reader gives up, and the store's decoding answers what
    /// Foundation answers (a value, or an error where Foundation has none).
    @Test func otherShapesAreLeftToTheGeneralDecoding() throws {
        let key = #""currency":"USD","day":"2026-01-02","productId":"p","storefront":"USA","subscriptionGroup":"g""#
        // As many values as a measure has (the store refuses another count).
        let rest = String(repeating: ",1", count: AnalyticsMeasures.columns.count - 1)
        let others = [
            #"[{"key":{\#(key)},"values":[1\#(rest)],"extra":1}]"#,  // a member Foundation ignores
            #"[{"key":{\#(key),"note":"x"},"values":[1\#(rest)]}]"#,
            #"[{"key":{\#(key)},"values":[1\#(rest)],"values":[2\#(rest)]}]"#,  // a member twice
            #"[{"key":{\#(key),"store":null},"values":[1\#(rest)]}]"#,  // null for the App Store
            #"[{"key":{\#(key.replacingOccurrences(of: "\"day\"", with: "\"d\\u0061y\""))},"values":[1\#(rest)]}]"#,
            #"[{"key":{\#(key)},"values":[1.0\#(rest)]}]"#,  // a number with a fraction
            #"[{"key":{\#(key)},"values":[1e2\#(rest)]}]"#,
            #"[{"key":{\#(key),"store":"elsewhere"}, "values":[1\#(rest)]}]"#,  // errors
            #"[{"key":{\#(key)}}]"#,
            #"[{"key":{\#(key.replacingOccurrences(of: "2026-01-02", with: "2026-1-2"))},"values":[1\#(rest)]}]"#,
            #"{"key":{\#(key)},"values":[1\#(rest)]}"#,
            #"[{"key":{\#(key)},"values":["1"\#(rest)]}]"#,
        ]
        var decoded = 0
        for text in others {
            #expect(ColumnJSONReader.contributions(from: text) == nil, "\(text)")
            let expected = Self.foundation(text)
            let stored = try? SQLStoreTransaction.storedContribution(text)
            #expect((stored != nil) == (expected != nil), "\(text)")
            if let expected, let stored {
                decoded += 1
                let summed = Dictionary(expected.map { ($0.key, $0.values) }, uniquingKeysWith: { $1 })
                #expect(stored.keys == summed.keys.sorted(), "\(text)")
                #expect(stored.measures.map(\.values) == stored.keys.map { summed[$0]! }, "\(text)")
            }
        }
        // Foundation reads the ignored member, the null, the escaped key and the fraction;
        // the reader read none of them.
        #expect(decoded >= 4)
        #expect(ColumnJSONReader.cohorts(from: #"{"ltv":[],"retention":[],"more":[]}"#) == nil)
        #expect(ColumnJSONReader.cohorts(from: #"{"ltv":[]}"#) == nil)
    }
}
