/// An app's analytics terms, set through the admin API: the reporting currency and its rate
/// table, the Small Business Program periods, the commission rates per storefront, and Google
/// Play's service-fee terms (`googlePlay`: `PlayCommissionRule`).
///
/// `validationFailure` names the first field out of bounds; the edge refuses such settings.
/// - Note: Immutable value; `Sendable`.
public struct AnalyticsSettings: Sendable, Hashable, Codable {
    /// ISO 4217 code of the totals in one currency; `nil`: no total, figures per currency only.
    public var reportingCurrency: String?
    public var smallBusinessProgram: [SmallBusinessProgramPeriod]
    public var defaultRates: CommissionRates
    public var ratesByStorefront: [String: CommissionRates]
    public var exchangeRates: [ExchangeRate]
    public var googlePlay: PlayCommissionRule

    public static let maximumPeriods = 100
    public static let maximumStorefronts = 300
    public static let maximumExchangeRates = 10_000

    public init(
        reportingCurrency: String? = nil, smallBusinessProgram: [SmallBusinessProgramPeriod] = [],
        defaultRates: CommissionRates = .apple, ratesByStorefront: [String: CommissionRates] = [:],
        exchangeRates: [ExchangeRate] = [], googlePlay: PlayCommissionRule = PlayCommissionRule()
    ) {
        self.reportingCurrency = reportingCurrency
        self.smallBusinessProgram = smallBusinessProgram
        self.defaultRates = defaultRates
        self.ratesByStorefront = ratesByStorefront
        self.exchangeRates = exchangeRates
        self.googlePlay = googlePlay
    }

    private enum CodingKeys: String, CodingKey {
        case reportingCurrency, smallBusinessProgram, commissionRates, exchangeRates, googlePlay
    }

    private enum RateKeys: String, CodingKey { case `default`, byStorefront }

    /// The admin API's shape (docs/analytics.md): absent members take their defaults.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        reportingCurrency = try container.decodeIfPresent(String.self, forKey: .reportingCurrency)
        smallBusinessProgram =
            try container.decodeIfPresent([SmallBusinessProgramPeriod].self, forKey: .smallBusinessProgram) ?? []
        exchangeRates = try container.decodeIfPresent([ExchangeRate].self, forKey: .exchangeRates) ?? []
        googlePlay = try container.decodeIfPresent(PlayCommissionRule.self, forKey: .googlePlay) ?? PlayCommissionRule()
        if container.contains(.commissionRates) {
            let rates = try container.nestedContainer(keyedBy: RateKeys.self, forKey: .commissionRates)
            defaultRates = try rates.decodeIfPresent(CommissionRates.self, forKey: .default) ?? .apple
            ratesByStorefront = try rates.decodeIfPresent([String: CommissionRates].self, forKey: .byStorefront) ?? [:]
        } else {
            defaultRates = .apple
            ratesByStorefront = [:]
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if let reportingCurrency {
            try container.encode(reportingCurrency, forKey: .reportingCurrency)
        } else {
            try container.encodeNil(forKey: .reportingCurrency)
        }
        try container.encode(smallBusinessProgram, forKey: .smallBusinessProgram)
        var rates = container.nestedContainer(keyedBy: RateKeys.self, forKey: .commissionRates)
        try rates.encode(defaultRates, forKey: .default)
        try rates.encode(ratesByStorefront, forKey: .byStorefront)
        try container.encode(exchangeRates, forKey: .exchangeRates)
        try container.encode(googlePlay, forKey: .googlePlay)
    }

    /// The commission terms alone: what proceeds (and so the stored aggregates) depend on.
    public var commissionRule: CommissionRule {
        CommissionRule(
            defaultRates: defaultRates, ratesByStorefront: ratesByStorefront,
            smallBusinessProgram: smallBusinessProgram,
            play: googlePlay)
    }

    /// The rate table, `nil` without a reporting currency.
    public var exchangeRateTable: ExchangeRateTable? {
        reportingCurrency.map { ExchangeRateTable(reportingCurrency: $0, rates: exchangeRates) }
    }

    /// The first field that is out of bounds, `nil` when all are valid.
    public var validationFailure: String? {
        func isCode(_ text: String, length: Int) -> Bool {
            text.utf8.count == length && text.utf8.allSatisfy { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
        }
        if let reportingCurrency, !isCode(reportingCurrency, length: 3) {
            return "reportingCurrency must be three capital letters (ISO 4217)"
        }
        if smallBusinessProgram.count > Self.maximumPeriods { return "smallBusinessProgram has too many periods" }
        if let bad = smallBusinessProgram.first(where: { !$0.isValid }) {
            return "smallBusinessProgram period from \(bad.from) ends before it starts"
        }
        if !defaultRates.isValid { return "commissionRates.default must be 0...10000 with reduced ≤ standard" }
        if ratesByStorefront.count > Self.maximumStorefronts {
            return "commissionRates.byStorefront has too many entries"
        }
        for (storefront, rates) in ratesByStorefront.sorted(by: { $0.key < $1.key }) {
            if !isCode(storefront, length: 3) { return "commissionRates.byStorefront keys must be alpha-3 codes" }
            if !rates.isValid {
                return "commissionRates.byStorefront.\(storefront) must be 0...10000 with reduced ≤ standard"
            }
        }
        if exchangeRates.count > Self.maximumExchangeRates { return "exchangeRates has too many entries" }
        if exchangeRates.contains(where: { !isCode($0.currency, length: 3) || $0.micros <= 0 }) {
            return "exchangeRates need a three-letter currency and a positive rate"
        }
        if Set(exchangeRates.map { "\($0.currency)/\($0.from)" }).count != exchangeRates.count {
            return "exchangeRates has two entries for one currency and day"
        }
        return googlePlay.validationFailure
    }
}
