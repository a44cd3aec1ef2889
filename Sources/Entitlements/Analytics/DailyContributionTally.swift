/// A customer's daily contribution while `AnalyticsContribution` adds it up: measures by day
/// and by the key's other members (product, group, storefront, currency, store), which are
/// numbered in the order they are first seen. An addition then hashes two integers instead of
/// an `AnalyticsDailyKey`'s four strings: with about four additions per transaction, hashing
/// those keys was a third of the figures of a long history. The keys are made once, at the end,
/// for the entries that are not zero.
/// - Note: Value type; used by one evaluation.
struct DailyContributionTally {
    /// The members of a daily key other than its day.
    struct Dimensions: Hashable {
        var productId: String
        var subscriptionGroup: String
        var storefront: String
        var currency: String
        var store: AnalyticsStore
    }

    private struct Slot: Hashable {
        var day: Int64
        var dimensions: Int
    }

    private var numbers: [Dimensions: Int] = [:]
    private var dimensions: [Dimensions] = []
    /// The number given last: a customer's transactions mostly share their dimensions, and
    /// comparing with them costs less than hashing them.
    private var lastNumber = -1
    /// Each slot's place in `measures`: growing a table of 250-byte measures moved them all at
    /// each doubling, which was half the cost of adding.
    private var places: [Slot: Int] = [:]
    private var slots: [Slot] = []
    private var measures: [AnalyticsMeasures] = []

    /// `expectedEntries`: about how many (day, dimensions) entries will be added, reserved at once.
    init(expectedEntries: Int = 0) {
        places.reserveCapacity(expectedEntries)
        slots.reserveCapacity(expectedEntries)
        measures.reserveCapacity(expectedEntries)
    }

    /// The number of `value`, given now when it is new.
    mutating func number(_ value: Dimensions) -> Int {
        if lastNumber >= 0, dimensions[lastNumber] == value { return lastNumber }
        if let known = numbers[value] {
            lastNumber = known
            return known
        }
        let new = dimensions.count
        dimensions.append(value)
        numbers[value] = new
        lastNumber = new
        return new
    }

    mutating func number(of money: TransactionProceeds) -> Int {
        number(
            Dimensions(
                productId: money.productId, subscriptionGroup: money.subscriptionGroup ?? "",
                storefront: money.storefront ?? "", currency: money.currency ?? "", store: .appStore))
    }

    /// Changes the measures of `day` under the dimensions numbered `dimensions`.
    mutating func add(_ day: CalendarDay, _ dimensions: Int, _ change: (inout AnalyticsMeasures) -> Void) {
        let slot = Slot(day: day.daysSince1970, dimensions: dimensions)
        if let place = places[slot] {
            change(&measures[place])
        } else {
            places[slot] = measures.count
            slots.append(slot)
            measures.append(AnalyticsMeasures())
            change(&measures[measures.count - 1])
        }
    }

    mutating func add(_ key: AnalyticsDailyKey, _ change: (inout AnalyticsMeasures) -> Void) {
        let numbered = number(
            Dimensions(
                productId: key.productId, subscriptionGroup: key.subscriptionGroup, storefront: key.storefront,
                currency: key.currency, store: key.store))
        add(key.day, numbered, change)
    }

    /// The entries that are not zero, by their daily keys.
    var contribution: [AnalyticsDailyKey: AnalyticsMeasures] {
        var result: [AnalyticsDailyKey: AnalyticsMeasures] = [:]
        result.reserveCapacity(measures.count)
        for (slot, value) in zip(slots, measures) where !value.isZero {
            let members = dimensions[slot.dimensions]
            result[
                AnalyticsDailyKey(
                    day: CalendarDay(daysSince1970: slot.day), productId: members.productId,
                    subscriptionGroup: members.subscriptionGroup, storefront: members.storefront,
                    currency: members.currency, store: members.store)] = value
        }
        return result
    }
}
