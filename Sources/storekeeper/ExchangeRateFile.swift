import Entitlements
import Foundation

/// An exchange-rate file for `storekeeper analytics rates import`: CSV lines
/// `date,currency,rate` (`2026-01-01,EUR,1.0842`: one EUR is 1.0842 of the reporting currency
/// from that day until the currency's next entry), an optional header line `date,currency,rate`,
/// blank lines ignored. Every line is checked before anything is saved; the first bad line is
/// the error, with its number.
/// - Note: Immutable value; `Sendable`.
struct ExchangeRateFile: Sendable {
    /// A line longer than this is refused (a valid one is under 40 bytes).
    static let maximumLineBytes = 200

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    var rates: [ExchangeRate] = []

    init(rates: [ExchangeRate]) { self.rates = rates }

    /// Reads `path`; `reportingCurrency` is refused as a line's currency.
    init(path: String, reportingCurrency: String) throws {
        var reader = try BoundedLineReader(path: path, maximumBytes: Self.maximumLineBytes)
        var number = 0
        var seen: Set<String> = []
        while let line = try reader.next() {
            number += 1
            guard case .line(let bytes) = line else {
                throw Failure(description: "line \(number): longer than \(Self.maximumLineBytes) bytes")
            }
            var text = String(decoding: bytes, as: UTF8.self)
            if text.hasSuffix("\r") { text.removeLast() }
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || (number == 1 && trimmed.lowercased() == "date,currency,rate") { continue }
            let fields = trimmed.split(separator: ",", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard fields.count == 3 else {
                throw Failure(description: "line \(number): expected date,currency,rate")
            }
            guard let day = CalendarDay(iso8601: fields[0]) else {
                throw Failure(description: "line \(number): date must be YYYY-MM-DD")
            }
            let currency = fields[1]
            guard currency.utf8.count == 3, currency.utf8.allSatisfy({ $0 >= 65 && $0 <= 90 }) else {
                throw Failure(description: "line \(number): currency must be three capital letters (ISO 4217)")
            }
            guard currency != reportingCurrency else {
                throw Failure(description: "line \(number): \(currency) is the reporting currency")
            }
            guard let micros = ExchangeRate.micros(decimal: fields[2]) else {
                throw Failure(
                    description: "line \(number): rate must be a positive decimal with at most 6 decimals")
            }
            guard seen.insert("\(currency)/\(day.iso8601)").inserted else {
                throw Failure(description: "line \(number): a second rate for \(currency) from \(day.iso8601)")
            }
            guard rates.count < AnalyticsSettings.maximumExchangeRates else {
                throw Failure(description: "more than \(AnalyticsSettings.maximumExchangeRates) rates")
            }
            rates.append(ExchangeRate(currency: currency, from: day, micros: micros))
        }
    }

    /// `existing` with this file's rates added, replacing an entry of the same currency and day;
    /// sorted by currency then day. Returns the merged list and how many entries were replaced.
    func merged(into existing: [ExchangeRate]) -> (rates: [ExchangeRate], replaced: Int) {
        var byKey: [String: ExchangeRate] = [:]
        for rate in existing { byKey["\(rate.currency)/\(rate.from.iso8601)"] = rate }
        var replaced = 0
        for rate in rates {
            let key = "\(rate.currency)/\(rate.from.iso8601)"
            if byKey[key] != nil { replaced += 1 }
            byKey[key] = rate
        }
        let sorted = byKey.values.sorted { ($0.currency, $0.from) < ($1.currency, $1.from) }
        return (sorted, replaced)
    }
}
