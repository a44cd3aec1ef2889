import AppStoreModels
import Foundation
import Testing

@testable import Entitlements

/// Mapping Apple's decoded payloads into facts: what is read, and the stable refusal codes.
@Suite struct FactMappingTests {
    @Test func notificationGivesItsEnvelopeTransactionAndRenewalInfo() throws {
        var transaction = JWSTransactionDecodedPayload()
        transaction.transactionId = "t1"
        transaction.originalTransactionId = "o1"
        transaction.productId = "monthly"
        transaction.purchaseDate = Fixture.day(0)
        transaction.expiresDate = Fixture.day(30)
        transaction.signedDate = Fixture.day(0)
        transaction.environment = RawEnum(.sandbox)
        transaction.offerType = RawEnum(.subscriptionOfferCode)
        transaction.offerIdentifier = "CODE"
        transaction.transactionReason = RawEnum(.purchase)
        transaction.type = RawEnum(.autoRenewableSubscription)
        var renewal = JWSRenewalInfoDecodedPayload()
        renewal.originalTransactionId = "o1"
        renewal.productId = "monthly"
        renewal.autoRenewStatus = RawEnum(.off)
        renewal.signedDate = Fixture.day(1)
        renewal.environment = RawEnum(.sandbox)
        var notification = ResponseBodyV2DecodedPayload()
        notification.notificationType = RawEnum(.didChangeRenewalStatus)
        notification.subtype = RawEnum(.autoRenewDisabled)
        notification.notificationUUID = "n1"
        notification.signedDate = Fixture.day(1)
        var data = NotificationData()
        data.environment = RawEnum(.sandbox)
        notification.data = data

        let facts = try Fact.facts(notification: notification, transaction: transaction, renewalInfo: renewal)
        #expect(facts.count == 3)
        guard case .transaction(let mapped) = facts[0], case .renewalInfo(let snapshot) = facts[1],
            case .notification(let envelope) = facts[2]
        else {
            Issue.record("unexpected fact kinds \(facts)")
            return
        }
        #expect(mapped.periodType == .offerCode && mapped.offerIdentifier == "CODE")
        #expect(mapped.productKind == .autoRenewable && mapped.environment == .sandbox)
        #expect(mapped.transactionReason == .purchase && mapped.ownership == .purchased)
        #expect(snapshot.autoRenewEnabled == false)
        #expect(envelope.type == "DID_CHANGE_RENEWAL_STATUS" && envelope.subtype == "AUTO_RENEW_DISABLED")
        #expect(envelope.originalTransactionId == "o1" && envelope.transactionId == "t1")
    }

    @Test func missingAndUnknownFieldsAreRefusedWithStableCodes() {
        var transaction = JWSTransactionDecodedPayload()
        transaction.transactionId = "t1"
        transaction.productId = "monthly"
        transaction.purchaseDate = Fixture.day(0)
        #expect(throws: EntitlementsError(code: .missingField, field: "signedDate", payload: "transaction")) {
            try Fact(transaction: transaction)
        }
        transaction.signedDate = Fixture.day(0)
        transaction.environment = RawEnum(rawValue: "Staging")
        #expect(throws: EntitlementsError(code: .invalidValue, field: "environment", payload: "transaction")) {
            try Fact(transaction: transaction)
        }
        #expect(
            EntitlementsError(code: .missingField, field: "signedDate", payload: "transaction").description
                == "fact.missingField: transaction lacks 'signedDate'")
    }

    @Test func introductoryOfferWithoutDiscountTypeAtPriceZeroIsATrial() throws {
        var transaction = JWSTransactionDecodedPayload()
        transaction.transactionId = "t1"
        transaction.productId = "monthly"
        transaction.purchaseDate = Fixture.day(0)
        transaction.signedDate = Fixture.day(0)
        transaction.environment = RawEnum(.production)
        transaction.offerType = RawEnum(.introductoryOffer)
        transaction.price = 0
        #expect(try TransactionFact(transaction).periodType == .trial)
        transaction.price = 990
        transaction.offerDiscountType = RawEnum(.payAsYouGo)
        #expect(try TransactionFact(transaction).periodType == .intro)
    }

    @Test func legacyV1NotificationTypesMapToV2() {
        let recovered = NotificationFact(
            legacyV1Type: "DID_RECOVER", notificationId: "v1", observedAt: Fixture.day(0), environment: .production,
            originalTransactionId: "o1", productId: "monthly")
        #expect(recovered?.type == "DID_RENEW" && recovered?.subtype == "BILLING_RECOVERY")
        #expect(
            NotificationFact(
                legacyV1Type: "CONSUMPTION_REQUEST", notificationId: "v1", observedAt: Fixture.day(0),
                environment: .production, originalTransactionId: nil, productId: nil) == nil)
    }
}

/// Small pieces the engine's exactness rests on.
@Suite struct ArithmeticTests {
    @Test(arguments: [
        ("2026-01-31T00:00:00Z", 1, "2026-02-28T00:00:00Z"),
        ("2024-01-31T12:30:00Z", 1, "2024-02-29T12:30:00Z"),
        ("2026-03-15T00:00:00Z", 12, "2027-03-15T00:00:00Z"),
        ("1969-12-31T23:59:59.500Z", 2, "1970-02-28T23:59:59.500Z"),
    ])
    func calendarMonths(start: String, months: Int64, expected: String) throws {
        let plain = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let date = try #require(fractional.date(from: start) ?? plain.date(from: start))
        #expect(CivilCalendar.format(CivilCalendar.adding(months: months, to: Timestamp(date))) == expected)
    }

    /// Instants are written as Foundation's Gregorian UTC formatter writes them, milliseconds
    /// only when there are some; years past four digits keep all of theirs.
    @Test func instantsFormatAsFoundationFormatsThem() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        var instants: [Int64] = [0, -1, 999, 1_000, 86_399_999, 951_782_400_000, 253_402_300_799_999]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<5_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            instants.append(Int64(state >> 20) % 7_258_118_400_000)  // 1970 to 2200
        }
        var differing: [String] = []
        for ms in instants {
            let millis = ((ms % 1000) + 1000) % 1000
            let seconds = Double(ms - millis) / 1000
            var expected = formatter.string(from: Date(timeIntervalSince1970: seconds))
            if millis != 0 { expected += "." + String(String(millis + 1000).dropFirst()) }
            expected += "Z"
            let written = CivilCalendar.format(Timestamp(millisecondsSince1970: ms))
            if written != expected { differing.append("\(ms): \(written) != \(expected)") }
        }
        #expect(differing == [])
        #expect(CivilCalendar.format(Timestamp(millisecondsSince1970: -1)) == "1969-12-31T23:59:59.999Z")
        #expect(CivilCalendar.format(Timestamp(millisecondsSince1970: 253_402_300_800_000)) == "10000-01-01T00:00:00Z")
        // Years of fewer digits are padded to four.
        #expect(CivilCalendar.format(Timestamp(millisecondsSince1970: -62_135_596_800_000)) == "0001-01-01T00:00:00Z")
        #expect(
            CivilCalendar.format(Timestamp(millisecondsSince1970: -59_011_459_200_001)) == "0099-12-31T23:59:59.999Z")
        #expect(CivilCalendar.format(Timestamp(millisecondsSince1970: -62_167_219_200_000)) == "0000-01-01T00:00:00Z")
    }

    @Test func periodsParseAndRoundTrip() throws {
        #expect(SubscriptionPeriod(iso8601: "P1M") == SubscriptionPeriod(value: 1, unit: .month))
        #expect(SubscriptionPeriod(iso8601: "P1Y2M") == nil)
        let json = try JSONEncoder().encode(SubscriptionPeriod(value: 3, unit: .day))
        #expect(String(data: json, encoding: .utf8) == "\"P3D\"")
        #expect(try JSONDecoder().decode(SubscriptionPeriod.self, from: json).iso8601 == "P3D")
    }

    @Test func moneyRoundsHalfAwayFromZero() {
        let price = Money(milliunits: 9995, currency: "EUR")
        #expect(price.scaled(by: 85, over: 100).milliunits == 8496)
        #expect(price.scaled(by: -85, over: 100).milliunits == -8496)
        #expect(price.description == "9.995 EUR")
    }

    @Test func everyEventTypeHasAnOrderWithinAnInstant() {
        #expect(Set(LifecycleEventType.allCases.map(\.rank)).count == LifecycleEventType.allCases.count)
    }

    /// Issue 11, defect 9(a): a legacy entry names no product type. One with an expiry is an
    /// auto-renewable subscription even when the catalog lacks its product (it used to become
    /// a lifetime non-consumable); either way the product is flagged as unknown.
    @Test func legacyPurchaseOfAnUnknownProductIsReadFromItsData() throws {
        func legacy(_ product: String, _ id: String, expires: Double?) -> TransactionFact {
            TransactionFact(
                LegacyTransactionFact(
                    productId: product, transactionId: id, originalTransactionId: id, purchaseDate: Fixture.day(0),
                    expiresDate: expires.map(Fixture.day), environment: .production, observedAt: Fixture.day(0)))
        }
        let expiring = legacy("retired_monthly", "t1", expires: 30)
        let unlock = legacy("retired_unlock", "t2", expires: nil)
        let known = legacy("monthly", "t3", expires: 30)
        #expect(expiring.productKind == .autoRenewable)
        #expect(unlock.productKind == nil)

        let during = Fixture.evaluate([.transaction(expiring), .transaction(unlock), .transaction(known)], at: 10)
        let info = during.customerInfo
        #expect(Set(info.subscriptions.keys) == ["retired_monthly", "monthly"])
        #expect(info.subscriptions["retired_monthly"]?.status == .active)
        #expect(info.subscriptions["retired_monthly"]?.expiresDate == Fixture.day(30))
        #expect(info.subscriptions["retired_monthly"]?.isUnknownProduct == true)
        #expect(info.subscriptions["monthly"]?.isUnknownProduct == nil)
        #expect(info.nonSubscriptionPurchases.map(\.productId) == ["retired_unlock"])
        #expect(info.nonSubscriptionPurchases.first?.kind == .nonConsumable)
        #expect(info.nonSubscriptionPurchases.first?.isUnknownProduct == true)
        // Unknown products grant nothing; only the catalog's monthly gives pro.
        #expect(info.activeEntitlementIds == ["pro"])
        #expect(info.entitlements["pro"]?.productId == "monthly")
        #expect(
            info.notes == [
                "product retired_monthly is not in the catalog: recorded, grants nothing",
                "product retired_unlock is not in the catalog: recorded, grants nothing",
            ])
        #expect(
            during.allEvents.map(\.id).sorted() == [
                "INITIAL_PURCHASE/t1", "INITIAL_PURCHASE/t3", "NON_CONSUMABLE_PURCHASE/t2",
            ])

        let after = Fixture.evaluate([.transaction(expiring)], at: 40).customerInfo
        #expect(after.subscriptions["retired_monthly"]?.status == .expired)
        #expect(after.nonSubscriptionPurchases.isEmpty)
        // The flag is absent (not false) for known products: stored states keep their bytes.
        let json = String(decoding: try JSONEncoder().encode(info.subscriptions["monthly"]), as: UTF8.self)
        #expect(!json.contains("isUnknownProduct"))
    }

    @Test func customerInfoRoundTripsThroughJSON() throws {
        let facts = ScenarioTable.all.first { $0.name.hasPrefix("downgrade") }!.facts
        let info = Fixture.evaluate(facts, at: 11).customerInfo
        let decoded = try JSONDecoder().decode(CustomerInfo.self, from: JSONEncoder().encode(info))
        #expect(decoded == info)
    }
}
