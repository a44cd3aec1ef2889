/// One exchange rate the operator provides: one unit of `currency` in the reporting currency,
/// from the day `from` until the next entry of the same currency.
/// - Note: Immutable value; `Sendable`.
public struct ExchangeRate: Sendable, Hashable, Codable {
    public var currency: String
    public var from: CalendarDay
    /// The rate × 1,000,000 (`1.0842` is 1084200): exact, no floating point.
    public var micros: Int64

    public init(currency: String, from: CalendarDay, micros: Int64) {
        self.currency = currency
        self.from = from
        self.micros = micros
    }

    /// Parses a positive decimal with at most 6 decimals and at most 9 integer digits
    /// (`1.0842`, `0.006512`, `150`); `nil` otherwise.
    public static func micros(decimal text: String) -> Int64? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.count <= 9, whole.allSatisfy({ $0.isASCII && $0.isNumber })
        else { return nil }
        var fraction = parts.count == 2 ? String(parts[1]) : ""
        guard fraction.count <= 6, parts.count == 1 || !fraction.isEmpty,
            fraction.allSatisfy({ $0.isASCII && $0.isNumber })
        else { return nil }
        fraction += String(repeating: "0", count: 6 - fraction.count)
        guard let wholeValue = Int64(whole), let fractionValue = Int64(fraction) else { return nil }
        let micros = wholeValue * 1_000_000 + fractionValue
        return micros > 0 ? micros : nil
    }

    private enum CodingKeys: String, CodingKey { case currency, from, rate }

    /// As the admin API writes it: `{"currency": "EUR", "from": "2026-01-01", "rate": "1.084200"}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        currency = try container.decode(String.self, forKey: .currency)
        from = try container.decode(CalendarDay.self, forKey: .from)
        let text = try container.decode(String.self, forKey: .rate)
        guard let micros = Self.micros(decimal: text) else {
            throw DecodingError.dataCorruptedError(
                forKey: .rate, in: container, debugDescription: "a positive decimal with at most 6 decimals")
        }
        self.micros = micros
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(currency, forKey: .currency)
        try container.encode(from, forKey: .from)
        try container.encode(decimal, forKey: .rate)
    }

    /// `1.084200`.
    public var decimal: String {
        let fraction = String(micros % 1_000_000)
        return "\(micros / 1_000_000).\(String(repeating: "0", count: 6 - fraction.count))\(fraction)"
    }
}

/// Converts amounts to an app's reporting currency with the operator's rates, at the rate in
/// force on the purchase day (the latest entry of the currency whose `from` is not after it).
/// The reporting currency converts at 1. No rate: no conversion, never a guess.
/// - Note: Immutable value; `Sendable`.
public struct ExchangeRateTable: Sendable, Hashable, Codable {
    public var reportingCurrency: String
    public private(set) var rates: [ExchangeRate]

    public init(reportingCurrency: String, rates: [ExchangeRate]) {
        self.reportingCurrency = reportingCurrency
        self.rates = rates.sorted { $0.currency != $1.currency ? $0.currency < $1.currency : $0.from < $1.from }
    }

    /// The rate × 1,000,000 for `currency` on `day`, `nil` when there is none.
    public func micros(for currency: String, on day: CalendarDay) -> Int64? {
        if currency == reportingCurrency { return 1_000_000 }
        return rates.last { $0.currency == currency && $0.from <= day }?.micros
    }

    /// `milliunits` of `currency` in reporting milliunits, rounded half away from zero; `nil`
    /// without a rate, or when the converted amount does not fit in `Int64`.
    public func convert(_ milliunits: Int64, currency: String, on day: CalendarDay) -> Int64? {
        micros(for: currency, on: day).flatMap { Money.scaledExactly(milliunits, by: $0, over: 1_000_000) }
    }
}

/// A sum in the reporting currency, with the currencies that could not be converted.
/// - Note: Immutable value; `Sendable`.
public struct ReportingTotal: Sendable, Hashable, Codable {
    public var currency: String
    public var milliunits: Int64 = 0
    /// Currencies with at least one amount left out, sorted: for want of a rate, or because
    /// the converted amount (or the sum with it) does not fit in 64 bits (an absurd rate).
    public private(set) var unconverted: [String] = []

    public init(currency: String) { self.currency = currency }

    /// Adds one amount converted at `day`'s rate; records its currency when it cannot.
    public mutating func add(_ amount: Int64, currency: String, on day: CalendarDay, table: ExchangeRateTable) {
        if let converted = table.convert(amount, currency: currency, on: day),
            case let (sum, overflow) = milliunits.addingReportingOverflow(converted), !overflow
        {
            milliunits = sum
        } else if !unconverted.contains(currency) {
            unconverted.append(currency)
            unconverted.sort()
        }
    }
}
