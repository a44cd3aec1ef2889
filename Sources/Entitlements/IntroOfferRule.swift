import AppStoreModels

/// Apple grants an introductory offer (free trial, pay as you go, pay up front) once per
/// subscription group: any earlier introductory period in the group, including legacy
/// `is_trial_period` / `is_in_intro_offer_period` entries, makes the customer ineligible.
///
/// Only the customer's own purchases count: a Family Sharing transaction reflects the
/// organizer's offer, not one this customer redeemed.
enum IntroOfferRule {
    static func eligibility(
        transactions: [TransactionFact], kinds: [String: ProductKind], catalog: ProductCatalog
    ) -> [String: IntroOfferEligibility] {
        var groups = Set(catalog.products.values.filter { $0.kind == .autoRenewable }.compactMap(\.subscriptionGroup))
        var usedBy: [String: TransactionFact] = [:]
        for transaction in transactions where kinds[transaction.transactionId] == .autoRenewable {
            guard
                let group = catalog[transaction.productId]?.subscriptionGroup ?? transaction.subscriptionGroup
            else { continue }
            groups.insert(group)
            guard transaction.periodType.isIntroductory, transaction.ownership == .purchased else { continue }
            if let earlier = usedBy[group], !FactLedger.byPurchase(transaction, earlier) { continue }
            usedBy[group] = transaction
        }
        var result: [String: IntroOfferEligibility] = [:]
        for group in groups {
            if let used = usedBy[group] {
                result[group] = IntroOfferEligibility(
                    subscriptionGroup: group, isEligible: false, usedByTransactionId: used.transactionId,
                    reason:
                        "ineligible: \(used.periodType == .trial ? "free trial" : "introductory offer") of \(used.productId) used \(used.purchaseDate.humanReadable)"
                )
            } else {
                result[group] = IntroOfferEligibility(
                    subscriptionGroup: group, isEligible: true, usedByTransactionId: nil,
                    reason: "eligible: no introductory offer used in \(group)")
            }
        }
        return result
    }
}
