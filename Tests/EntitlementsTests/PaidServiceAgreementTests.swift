import AppStoreModels
import Testing

@testable import Entitlements

/// The engine's revenue (`CustomerInfo.revenue`) and analytics' proceeds read a customer's
/// paid service, the condition of the 15 % commission, the same way: one transaction must not
/// be at 15 % in the API and at 30 % in the figures. Each case below was read differently by
/// the two before they shared `PaidServiceAccrual`.
@Suite struct PaidServiceAgreementTests {
    static let dayMilliseconds: Int64 = 86_400_000

    /// What each side says of every paid auto-renewable transaction: days of paid service
    /// before it, and its commission in percent.
    struct Reading: Equatable, CustomStringConvertible {
        var days: [String: Int]
        var commission: [String: Int]
        var description: String {
            "days \(days.sorted { $0.key < $1.key }), commission \(commission.sorted { $0.key < $1.key })"
        }
    }

    static func engine(_ facts: [Fact]) -> Reading {
        let info = Fixture.evaluate(facts, at: 10_000).customerInfo
        var reading = Reading(days: [:], commission: [:])
        for revenue in info.revenue {
            guard let days = revenue.paidServiceDaysBefore else { continue }
            reading.days[revenue.transactionId] = days
            if (revenue.price?.milliunits ?? 0) > 0 {
                reading.commission[revenue.transactionId] = revenue.commissionPercent
            }
        }
        return reading
    }

    static func analytics(_ facts: [Fact]) -> Reading {
        let transactions = facts.compactMap { fact -> TransactionFact? in
            if case .transaction(let transaction) = fact { return transaction }
            return nil
        }
        let accrued = PaidServiceAccrual.accruedBefore(transactions, catalog: Fixture.catalog)
        var reading = Reading(days: accrued.mapValues { Int($0 / dayMilliseconds) }, commission: [:])
        let calculator = ProceedsCalculator(rule: CommissionRule(), catalog: Fixture.catalog)
        for proceeds in calculator.proceeds(of: transactions) where proceeds.gross > 0 {
            guard accrued[proceeds.transactionId] != nil else { continue }
            reading.commission[proceeds.transactionId] = proceeds.commission.basisPoints / 100
        }
        return reading
    }

    /// Both sides, checked equal and against the expected reading.
    static func expect(_ facts: [Fact], days: [String: Int], commission: [String: Int]) {
        let expected = Reading(days: days, commission: commission)
        #expect(engine(facts) == expected, "engine")
        #expect(analytics(facts) == expected, "analytics")
    }

    @Test func aFullyRefundedPeriodDoesNotBridgeALapse() {
        // A paid year, 35 days later a purchase refunded in full, and 40 days after that a
        // paid purchase: 75 days after the last paid service, so the count restarts. The engine
        // read the refunded purchase as service ending at its purchase, which bridged the lapse
        // and gave 15 %.
        Self.expect(
            [
                Fixture.tx("y1", "yearly", 0, 365),
                Fixture.tx("refunded", "yearly", 400, 765, revokedAt: 401, revocationReason: 0),
                Fixture.tx("c", "yearly", 440, 805),
            ],
            days: ["y1": 0, "refunded": 365, "c": 0], commission: ["y1": 30, "refunded": 15, "c": 30])
    }

    @Test func anUpgradeNotYetMarkedEndsThePaidServiceOfTheOldProduct() {
        // The upgrade's notification carries only the new transaction: the yearly one is not
        // yet marked `isUpgraded`. Its paid service ends at the upgrade (59 days), not at its
        // expiry; analytics counted the whole year and gave the upgrade 15 %.
        Self.expect(
            [
                Fixture.tx("y1", "yearly", 0, 365),
                Fixture.tx("plus", "plus_monthly", 59, 90),
            ],
            days: ["y1": 0, "plus": 59], commission: ["y1": 30, "plus": 30])
    }

    @Test func aFreeOfferIsNotPaidService() {
        // A year free through an offer code, then a paid year: no paid service before it.
        // Analytics counted the free year and gave 15 %.
        Self.expect(
            [
                Fixture.tx("free", "yearly", 0, 365, period: .offerCode, price: 0),
                Fixture.tx("paid", "yearly", 365, 730),
            ],
            days: ["paid": 0], commission: ["paid": 30])
    }

    @Test func aRenewalDateExtensionIsNotPaidService() {
        // Apple extended the first year by 30 days: the paid year is still 365 days. The engine
        // counted 395.
        Self.expect(
            [
                Fixture.tx("y1", "yearly", 0, 395),
                Fixture.tx("y2", "yearly", 395, 760),
            ],
            days: ["y1": 0, "y2": 365], commission: ["y1": 30, "y2": 15])
    }

    /// Random histories of several chains in two groups (renewals, lapses, upgrades marked and
    /// not, full and prorated refunds, trials, free offers, family sharing): both read the same.
    @Test func randomHistoriesReadTheSame() {
        var random = SeededGenerator(seed: 0x5eed_ac_c2)
        let products = ["monthly", "monthly_alt", "yearly", "plus_monthly", "news_monthly"]
        for round in 0..<300 {
            var facts: [Fact] = []
            for chain in 0..<Int.random(in: 1...3, using: &random) {
                var start = Double(Int.random(in: 0...400, using: &random))
                var product = products.randomElement(using: &random)!
                for index in 0..<Int.random(in: 1...8, using: &random) {
                    let length: Double = product == "yearly" ? 365 : 31
                    let extended = Int.random(in: 0..<6, using: &random) == 0 ? 20 : 0
                    var end = start + length + Double(extended)
                    let roll = Int.random(in: 0..<20, using: &random)
                    let id = "r\(round)-c\(chain)-t\(index)"
                    let next =
                        Int.random(in: 0..<4, using: &random) == 0 ? products.randomElement(using: &random)! : product
                    let upgradeAt = start + Double(Int.random(in: 1...25, using: &random))
                    switch roll {
                    case 0:
                        facts.append(Fixture.tx(id, product, start, end, original: "o\(chain)", period: .trial))
                    case 1:
                        facts.append(
                            Fixture.tx(id, product, start, end, original: "o\(chain)", period: .promotional, price: 0))
                    case 2:
                        facts.append(Fixture.tx(id, product, start, end, original: "o\(chain)", family: true))
                    case 3:
                        facts.append(
                            Fixture.tx(
                                id, product, start, end, original: "o\(chain)", revokedAt: start + 2,
                                revocationReason: 0))
                    case 4:
                        facts.append(
                            Fixture.tx(
                                id, product, start, end, original: "o\(chain)", revokedAt: start + 10,
                                revocationReason: 0,
                                revocationType: .refundProrated, revocationPercentage: 50_000))
                    default:
                        let marked = next != product && Int.random(in: 0..<2, using: &random) == 0
                        facts.append(
                            Fixture.tx(
                                id, product, start, end, original: "o\(chain)", revokedAt: marked ? upgradeAt : nil,
                                upgraded: marked))
                        if next != product { end = upgradeAt }
                    }
                    // The next period: back to back, after a lapse of up to 90 days, or an upgrade.
                    let lapse =
                        Int.random(in: 0..<3, using: &random) == 0 ? Double(Int.random(in: 1...90, using: &random)) : 0
                    start = end + lapse
                    product = next
                }
            }
            let engine = Self.engine(facts)
            let analytics = Self.analytics(facts)
            #expect(engine == analytics, "round \(round)")
            if engine != analytics { return }
        }
    }
}
