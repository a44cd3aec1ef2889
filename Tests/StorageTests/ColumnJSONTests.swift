import AppStoreModels
import Foundation
import StorekeeperTesting
import Testing

@testable import Entitlements
@testable import Storage

private typealias F = IngestionFixture

/// `ColumnJSON` (and the canonical writer under `AppStoreJSON.encode`) must write exactly what
/// Foundation's `JSONEncoder` writes with sorted keys, for every stored model.
@Suite("Column JSON")
struct ColumnJSONTests {
    static func same<T: Encodable>(_ value: T, _ comment: Comment? = nil, fast: Bool = true) {
        let expected = String(decoding: AppStoreJSON.foundationEncode(value), as: UTF8.self)
        #expect(ColumnJSON.encode(value) == expected, comment)
        #expect(AppStoreJSON.encode(value) == AppStoreJSON.foundationEncode(value), comment)
        // Whether the value is written by the canonical writer or left to Foundation.
        #expect((CanonicalJSONWriter().encodeDocument(value) != nil) == fast, comment)
    }

    static let awkward = "quote \" backslash \\ slash / controls \u{0}\u{1}\u{8}\u{9}\u{A}\u{C}\u{D}\u{1F} é ü 😀 \u{7F}"

    /// A transaction fact with every field set.
    static let fullTransaction = TransactionFact(
        transactionId: "t-\(awkward)", originalTransactionId: "o/1", productId: "p",
        productKind: .autoRenewable,
        subscriptionGroup: "g", purchaseDate: F.at(1), originalPurchaseDate: F.at(0), expiresDate: F.at(31),
        signedDate: F.at(2), revocationDate: F.at(3), revocationReason: 1, revocationType: .refundFull,
        revocationPercentage: 50_000, isUpgraded: true, periodType: .intro, offerIdentifier: "offer",
        ownership: .familyShared, environment: .sandbox, price: -9_990, currency: "EUR", quantity: 3,
        transactionReason: .renewal, storefront: "DEU")

    /// Facts of each kind, all fields and none (the full transaction first).
    static let sampleFacts: [Fact] = [
        .transaction(fullTransaction),
        .transaction(
            TransactionFact(
                transactionId: "t", originalTransactionId: "o", productId: "p", purchaseDate: F.at(0),
                signedDate: F.at(0), environment: .production)),
        .renewalInfo(
            RenewalFact(
                originalTransactionId: "o", productId: "p", autoRenewProductId: "q", autoRenewEnabled: false,
                expirationIntent: 2, isInBillingRetryPeriod: true, gracePeriodExpiresDate: F.at(9),
                priceIncreaseStatus: 0, signedDate: F.at(4), environment: .xcode)),
        .renewalInfo(
            RenewalFact(originalTransactionId: "o", productId: "p", signedDate: F.at(4), environment: .sandbox)),
        .notification(
            NotificationFact(
                notificationId: "n", type: "DID_RENEW", subtype: "BILLING_RECOVERY", signedDate: F.at(5),
                environment: .production, originalTransactionId: "o", transactionId: "t", productId: "p")),
    ]

    @Test("transaction, renewal and notification facts, all fields and none")
    func facts() throws {
        let full = Self.fullTransaction
        // The hand-written member list covers every stored member of TransactionFact.
        let members = try #require(
            try JSONSerialization.jsonObject(with: Data(ColumnJSON.transaction(full).utf8)) as? [String: Any])
        #expect(Set(members.keys) == Set(Mirror(reflecting: full.storedMembers).children.compactMap(\.label)))
        #expect(ColumnJSON.transaction(full) == ColumnJSON.encode(full))
        for fact in Self.sampleFacts {
            switch fact {
            case .transaction(let value): Self.same(value)
            case .renewalInfo(let value): Self.same(value)
            case .notification(let value): Self.same(value)
            default: Issue.record("no sample of \(fact)")
            }
        }
        Self.same(Fact.transaction(full), "an enum with associated values is left to Foundation", fast: false)
    }

    /// The hand-written entry of a daily contribution against the `Encodable` form (and
    /// Foundation's): every combination of awkward and plain strings in the key's four text
    /// members, both stores, days from 1970 to 9999, extreme values and none.
    @Test("daily contribution entries, written member by member")
    func contributionEntries() {
        let texts = ["", "USD", Self.awkward, "\u{1F}a\"b", "ε/δ"]
        let values: [[Int64]] = [[], [0], [-1, 0, 1], [Int64.min, Int64.max], [9_990, -4_995, 120, 7, 0, 0, 3]]
        let days: [Int64] = [0, 20_454, 2_932_896]
        var checked = 0
        for productId in texts {
            for subscriptionGroup in texts {
                for storefront in texts {
                    for currency in texts {
                        let key = AnalyticsDailyKey(
                            day: CalendarDay(daysSince1970: days[checked % days.count]), productId: productId,
                            subscriptionGroup: subscriptionGroup, storefront: storefront, currency: currency,
                            store: AnalyticsStore.allCases[checked % AnalyticsStore.allCases.count])
                        let entry = SQLStoreTransaction.StoredContribution(
                            key: key, values: values[checked % values.count])
                        #expect(ColumnJSON.contribution(entry) == AppStoreJSON.encodeText(entry), "\(entry)")
                        Self.same(entry, "\(entry)")
                        checked += 1
                    }
                }
            }
        }
        #expect(checked == 625)
    }

    /// A lifecycle event with every member set: awkward strings, negative and extreme money, a
    /// product change, a retraction's id, Google Play.
    static var fullEvent: LifecycleEvent {
        var full = LifecycleEvent(
            id: "RENEWAL/\(Self.awkward)", type: .productChange, customerId: "user-\(Self.awkward)",
            environment: .sandbox, occurredAt: F.at(3), productId: "p.\(Self.awkward)",
            entitlementIds: ["pro", Self.awkward, ""], transactionId: "t", originalTransactionId: "o",
            periodType: .offerCode, price: Money(milliunits: -9_990, currency: "EUR"), commissionPercent: 15,
            proceeds: Money(milliunits: Int64.min, currency: Self.awkward), expiresDate: F.at(31),
            expirationReason: .billingError, refundReason: .developerIssue,
            productChange: ProductChange(
                fromProductId: "a", toProductId: Self.awkward, kind: .crossgrade, timing: .atNextRenewal,
                effectiveAt: F.at(4)),
            offerIdentifier: "offer", priceIncreaseConsent: .accepted, gracePeriodExpiresDate: F.at(40),
            isResubscription: true, summary: Self.awkward)
        full.afterFactGap = false
        full.retractedEventId = "EXPIRATION/o/1"
        full.store = .playStore
        return full
    }

    /// The hand-written lifecycle event against Foundation: every member set (awkward strings,
    /// negative money, a product change withdrawn or not), none set, and each optional alone.
    @Test("lifecycle events, written member by member")
    func lifecycleEvents() throws {
        let full = Self.fullEvent
        // The hand-written member list covers every stored member of LifecycleEvent.
        let members = try #require(
            try JSONSerialization.jsonObject(with: Data(ColumnJSON.event(full).utf8)) as? [String: Any])
        #expect(Set(members.keys) == Set(Mirror(reflecting: full.storedMembers).children.compactMap(\.label)))
        Self.same(full)
        for withdrawn in [true, false] {
            var change = full
            change.productChange?.isWithdrawn = withdrawn
            Self.same(change, "isWithdrawn \(withdrawn)")
        }
        var appStore = full
        appStore.store = .appStore
        Self.same(appStore)
        let bare = LifecycleEvent(
            id: "", type: .eventRetracted, customerId: "", environment: .production, occurredAt: F.at(0),
            productId: "", entitlementIds: [], summary: "")
        Self.same(bare)
        // Each optional member alone on the bare event.
        let setters: [(String, (inout LifecycleEvent) -> Void)] = [
            ("transactionId", { $0.transactionId = full.transactionId }),
            ("originalTransactionId", { $0.originalTransactionId = full.originalTransactionId }),
            ("periodType", { $0.periodType = full.periodType }), ("price", { $0.price = full.price }),
            ("commissionPercent", { $0.commissionPercent = full.commissionPercent }),
            ("proceeds", { $0.proceeds = full.proceeds }), ("expiresDate", { $0.expiresDate = full.expiresDate }),
            ("expirationReason", { $0.expirationReason = full.expirationReason }),
            ("refundReason", { $0.refundReason = full.refundReason }),
            ("productChange", { $0.productChange = full.productChange }),
            ("offerIdentifier", { $0.offerIdentifier = full.offerIdentifier }),
            ("priceIncreaseConsent", { $0.priceIncreaseConsent = full.priceIncreaseConsent }),
            ("gracePeriodExpiresDate", { $0.gracePeriodExpiresDate = full.gracePeriodExpiresDate }),
            ("afterFactGap", { $0.afterFactGap = true }), ("retractedEventId", { $0.retractedEventId = "x" }),
            ("store", { $0.store = .playStore }),
        ]
        for (name, set) in setters {
            var event = bare
            set(&event)
            Self.same(event, "\(name) alone")
            #expect(ColumnJSON.event(event).contains("\"\(name)\":"), "\(name)")
        }
    }

    /// The hand-written cohort contribution against the `Encodable` form (and Foundation's):
    /// awkward and plain strings in every text member, days from 1970 to 9999, extreme values,
    /// empty lists, and the members of each key type all named.
    @Test("cohort contributions, written member by member")
    func cohortContributions() throws {
        let texts = ["", "USD", Self.awkward, "\u{1F}a\"b", "ε/δ"]
        let days: [Int64] = [0, 20_454, 2_932_896]
        let values: [[Int64]] = [[], [0], [Int64.min, Int64.max, -1]]
        var contribution = SQLStoreTransaction.StoredCohortContribution(CohortContribution())
        Self.same(contribution, "empty")
        for (index, text) in texts.enumerated() {
            let month = CalendarDay(daysSince1970: days[index % days.count])
            contribution.retention.append(
                .init(
                    key: RetentionCohortKey(
                        cohortMonth: month, productId: text, subscriptionGroup: texts[(index + 1) % texts.count],
                        storefront: texts[(index + 2) % texts.count], paidRenewals: Int64(index) - 2),
                    subscriptions: [Int64.min, -1, 0, 1, Int64.max][index]))
            Self.same(contribution, "\(index) retention entries")
            contribution.ltv.append(
                .init(
                    key: LTVCohortKey(
                        cohortMonth: month, productId: texts[(index + 3) % texts.count], subscriptionGroup: text,
                        storefront: texts[(index + 4) % texts.count],
                        day: CalendarDay(daysSince1970: days[(index + 1) % days.count]), currency: text),
                    values: values[index % values.count]))
            Self.same(contribution, "\(index) LTV entries")
        }
        #expect(ColumnJSON.cohorts(contribution) == AppStoreJSON.encodeText(contribution))
        // Every stored member of both keys is named.
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(ColumnJSON.cohorts(contribution).utf8)) as? [String: Any])
        let retention = try #require((object["retention"] as? [[String: Any]])?.first?["key"] as? [String: Any])
        #expect(
            Set(retention.keys)
                == Set(Mirror(reflecting: contribution.retention[0].key).children.compactMap(\.label)))
        let ltv = try #require((object["ltv"] as? [[String: Any]])?.first?["key"] as? [String: Any])
        #expect(Set(ltv.keys) == Set(Mirror(reflecting: contribution.ltv[0].key).children.compactMap(\.label)))
    }

    @Test("customer states and lifecycle events the engine derives")
    func derived() {
        let notifications = F.notifications(customers: 10, perCustomer: 10)
        var events = 0
        for (appUserId, own) in Dictionary(grouping: notifications, by: \.appUserId) {
            let evaluation = EntitlementEngine.evaluate(
                customerId: appUserId, environment: .production, facts: own.flatMap(\.facts), catalog: F.catalog,
                now: F.now)
            Self.same(evaluation.customerInfo, "\(appUserId)")
            for event in evaluation.allEvents { Self.same(event, "\(appUserId) \(event.id)") }
            events += evaluation.allEvents.count
        }
        #expect(events > 0)
    }

    @Test("configuration, audit details and plain values")
    func configuration() {
        Self.same(F.catalog)
        Self.same(JSONValue.object([:]))
        Self.same(
            JSONValue.object([
                "z": .string(Self.awkward),
                "a": .array([.null, .bool(true), .integer(-3), .object(["k": .bool(false)])]),
                "é": .integer(1), "B": .string(""), "aa": .null, "": .array([]),
            ]))
        Self.same(JSONValue.object(["n": .number(1.5)]), "floating point is left to Foundation", fast: false)
        Self.same(["b": 2, "a": 1, "A": 0, "ab": 3, "a\u{0}": 4])
        Self.same([Int?.none, 1, nil])
        Self.same([[String]]())
        Self.same(Self.awkward)
        Self.same(Int64.min)
        Self.same(UInt64.max)
        Self.same([Int8(-1): "x"], "integer-keyed dictionaries")
        Self.same(Date(timeIntervalSince1970: 0), fast: false)
        Self.same(Data([1, 2, 3]), fast: false)
        Self.same(Twice(), "a key written twice keeps its last value")
        Self.same(["a10": 1, "a9": 2, "a": 3], "digits order as bytes")
        Self.same(UUID(uuidString: "e5c7a9b0-1f2d-4c3b-8a9e-0123456789ab")!, "UUIDs are their uuidString")
        Self.same(URL(string: "https://example.com/a/b")!, fast: false)
        Self.same(Decimal(string: "1.25")!, fast: false)
        Self.same(["prices": [1.5, 2]], "floating point inside an array", fast: false)
        Self.same(Holder(count: 1, nothing: Nothing()), "a single value that encodes nothing", fast: false)
    }

    /// Opens a single value container and encodes nothing into it: Foundation writes `{}`.
    struct Nothing: Encodable {
        func encode(to encoder: any Encoder) throws { _ = encoder.singleValueContainer() }
    }

    struct Holder: Encodable {
        var count: Int
        var nothing: Nothing
    }

    struct Twice: Encodable {
        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(1, forKey: Key(stringValue: "b"))
            try container.encode("first", forKey: Key(stringValue: "a"))
            var again = encoder.container(keyedBy: Key.self)
            try again.encode("second", forKey: Key(stringValue: "a"))
        }
    }
}
