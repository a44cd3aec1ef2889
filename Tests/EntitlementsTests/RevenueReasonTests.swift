import AppStoreModels
import Testing

@testable import Entitlements

/// The `reason` of each revenue entry, word for word: the API returns it, and the ledger now
/// takes it from a table joined once instead of joining it per transaction.
@Suite struct RevenueReasonTests {
    static func reasons(_ facts: [Fact], catalog: ProductCatalog = Fixture.catalog) -> [String: String] {
        let info = Fixture.evaluate(facts, at: 600, catalog: catalog).customerInfo
        return Dictionary(uniqueKeysWithValues: info.revenue.map { ($0.transactionId, $0.reason) })
    }

    /// A transaction without a price (as a legacy receipt may give it).
    static func unpriced(_ id: String, _ product: String, original: String) -> Fact {
        .transaction(
            TransactionFact(
                transactionId: id, originalTransactionId: original, productId: product,
                purchaseDate: Fixture.day(3), signedDate: Fixture.day(3), environment: .production))
    }

    @Test func eachPricingAndCommissionHasItsReason() {
        // Fifteen monthly periods back to back: the fifteenth comes after more than a year of
        // paid service in the group.
        var facts = (0..<15).map { Fixture.tx("m\($0)", "monthly", Double($0 * 31), Double($0 * 31 + 31)) }
        facts += [
            Fixture.tx("family", "lifetime", 1, original: "o-family", family: true),
            Fixture.tx("trial", "news_monthly", 1, 8, original: "o-trial", period: .trial),
            Fixture.tx("refunded", "season_pass", 2, original: "o-refund", revokedAt: 3, revocationReason: 0),
            Fixture.tx(
                "prorated", "season_pass", 4, original: "o-prorated", revokedAt: 5, revocationReason: 0,
                revocationType: .refundProrated, revocationPercentage: 40_000),
            Self.unpriced("catalog", "lifetime", original: "o-catalog"),
            Self.unpriced("unknown", "retired_product", original: "o-unknown"),
        ]
        let reasons = Self.reasons(facts)
        #expect(reasons["m0"] == "price from the transaction; 30 % commission")
        #expect(
            reasons["m14"] == "price from the transaction; 15 % commission: over one year of paid service in the group")
        #expect(reasons["family"] == "family shared: no revenue")
        #expect(reasons["trial"] == "free trial")
        #expect(reasons["refunded"] == "price from the transaction; 30 % commission; refunded in full")
        #expect(reasons["prorated"] == "price from the transaction; 30 % commission; refunded in part")
        #expect(reasons["catalog"] == "price from the catalog (the transaction has none); 30 % commission")
        #expect(reasons["unknown"] == "no price known")
    }

    @Test func smallBusinessProgramReason() {
        let reasons = Self.reasons(
            [
                Fixture.tx("m0", "monthly", 0, 31),
                Fixture.tx("trial", "news_monthly", 1, 8, original: "o2", period: .trial),
            ],
            catalog: Fixture.smallBusinessCatalog)
        #expect(reasons["m0"] == "price from the transaction; 15 % commission: Small Business Program")
        #expect(reasons["trial"] == "free trial")
    }
}
