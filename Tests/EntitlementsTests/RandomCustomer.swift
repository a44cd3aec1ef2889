import AppStoreModels
import Entitlements

/// Random but plausible customers: several subscription chains (trials, renewals, billing
/// recoveries, resubscriptions, upgrades, downgrades, refunds and reversals, family sharing,
/// auto-renew toggles, price increases, notifications) and one-time purchases.
enum RandomCustomer {
    typealias F = Fixture

    static func facts(using random: inout SeededGenerator) -> (facts: [Fact], now: Double) {
        var facts: [Fact] = []
        var latest = 0.0
        let products = ["monthly", "yearly", "plus_monthly", "news_monthly"]
        for chain in 0..<Int.random(in: 1...3, using: &random) {
            let original = "o\(chain)"
            let family = random.chance(0.2)
            var product = products.randomElement(using: &random)!
            var start = Double(Int.random(in: 0...30, using: &random))
            for period in 0..<Int.random(in: 1...6, using: &random) {
                let id = "\(original)-t\(period)"
                let trial = period == 0 && random.chance(0.3)
                let length = trial ? 7.0 : (product == "yearly" ? 365.0 : 30.0)
                let end = start + length
                let offer: PeriodType = trial ? .trial : (random.chance(0.1) ? .promotional : .normal)
                let reason: TransactionReason = period == 0 ? .purchase : .renewal
                facts.append(
                    F.tx(id, product, start, end, original: original, period: offer, family: family, reason: reason))
                if random.chance(0.1) {
                    let revokedAt = start + Double(Int.random(in: 1...5, using: &random))
                    facts.append(
                        F.tx(
                            id, product, start, end, original: original, signed: revokedAt, period: offer,
                            family: family,
                            reason: reason, revokedAt: revokedAt,
                            revocationReason: Int32.random(in: 0...1, using: &random),
                            revocationType: family ? .familyRevoke : .refundFull))
                    if random.chance(0.3) {
                        facts.append(
                            F.tx(
                                id, product, start, end, original: original, signed: revokedAt + 2, period: offer,
                                family: family, reason: reason))
                    }
                }
                for _ in 0..<Int.random(in: 0...3, using: &random) {
                    let signed = start + Double(Int.random(in: 0...Int(length), using: &random)) + 0.25
                    facts.append(
                        F.ri(
                            product, signed: signed, original: original, autoRenew: random.chance(0.6),
                            next: random.chance(0.15) ? products.randomElement(using: &random)! : nil,
                            retry: signed > end && random.chance(0.5), grace: random.chance(0.2) ? end + 6 : nil,
                            priceIncrease: random.chance(0.1) ? Int32.random(in: 0...1, using: &random) : nil))
                }
                if random.chance(0.1) {
                    facts.append(
                        F.note(
                            .expired, [.voluntary, .billingRetry, .priceIncrease].randomElement(using: &random)!,
                            signed: end + 1, original: original, product: product))
                }
                if random.chance(0.1) {
                    facts.append(F.note(.didFailToRenew, signed: end + 0.5, original: original, product: product))
                }
                // How the next period begins.
                let roll = Double.random(in: 0..<1, using: &random)
                if roll < 0.12 && product != "plus_monthly" {
                    let at = start + Double(Int.random(in: 1...Int(length - 1), using: &random))
                    facts.append(
                        F.tx(
                            id, product, start, end, original: original, signed: at, period: offer, family: family,
                            reason: reason, revokedAt: at, upgraded: true))
                    product = "plus_monthly"
                    start = at
                } else if roll < 0.75 {
                    start = end
                } else if roll < 0.85 {
                    start = end + Double(Int.random(in: 1...20, using: &random))
                    facts.append(F.ri(product, signed: end + 0.5, original: original, retry: true))
                } else {
                    start = end + Double(Int.random(in: 20...100, using: &random))
                    if random.chance(0.3) { product = products.randomElement(using: &random)! }
                }
                latest = max(latest, end)
            }
        }
        for index in 0..<Int.random(in: 0...4, using: &random) {
            let product = ["season_pass", "lifetime", "coins_100"].randomElement(using: &random)!
            let id = "p\(index)"
            let day = Double(Int.random(in: 0...200, using: &random))
            let family = product == "lifetime" && random.chance(0.2)
            facts.append(F.tx(id, product, day, original: id, family: family))
            if random.chance(0.15) {
                facts.append(
                    F.tx(
                        id, product, day, original: id, signed: day + 3, family: family, revokedAt: day + 3,
                        revocationReason: 0))
            }
            latest = max(latest, day)
        }
        if random.chance(0.1) {
            facts.append(F.tx("s0", "monthly", 0, 30, original: "so", environment: .sandbox))
        }
        return (facts, latest + Double(Int.random(in: -20...40, using: &random)))
    }
}
