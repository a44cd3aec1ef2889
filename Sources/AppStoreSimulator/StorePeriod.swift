import Foundation

/// A store duration as Apple writes it in ISO 8601 (`P1W`, `P1M`, `P3M`, `P1Y`, `P3D`):
/// subscription periods, offer periods and `offerPeriod` in signed transactions.
/// - Note: Immutable value; `Sendable`. Encodes as its ISO 8601 text.
public struct StorePeriod: Sendable, Hashable, Codable, CustomStringConvertible {
    public let years: Int
    public let months: Int
    public let weeks: Int
    public let days: Int

    public init(years: Int = 0, months: Int = 0, weeks: Int = 0, days: Int = 0) {
        self.years = years
        self.months = months
        self.weeks = weeks
        self.days = days
    }

    public static let week = StorePeriod(weeks: 1)
    public static let month = StorePeriod(months: 1)
    public static let year = StorePeriod(years: 1)

    /// Parses `PnYnMnWnD` (date parts only: the store has no periods shorter than a day).
    public init?(iso text: String) {
        guard text.hasPrefix("P"), text.count > 1 else { return nil }
        var parts: [Character: Int] = [:]
        var digits = ""
        for character in text.dropFirst() {
            if character.isASCII, character.isNumber {
                digits.append(character)
            } else {
                guard "YMWD".contains(character), let value = Int(digits), parts[character] == nil else { return nil }
                parts[character] = value
                digits = ""
            }
        }
        guard digits.isEmpty, !parts.isEmpty else { return nil }
        self.init(years: parts["Y"] ?? 0, months: parts["M"] ?? 0, weeks: parts["W"] ?? 0, days: parts["D"] ?? 0)
    }

    public var description: String {
        var text = "P"
        if years > 0 { text += "\(years)Y" }
        if months > 0 { text += "\(months)M" }
        if weeks > 0 { text += "\(weeks)W" }
        if days > 0 { text += "\(days)D" }
        return text == "P" ? "P0D" : text
    }

    /// The period repeated `count` times (a pay-as-you-go offer of three months: `P1M` × 3).
    public func times(_ count: Int) -> StorePeriod {
        StorePeriod(years: years * count, months: months * count, weeks: weeks * count, days: days * count)
    }

    /// Length in months, for compressed time and for comparing durations (a week is 7/30).
    public var approximateMonths: Double {
        Double(years * 12 + months) + Double(weeks * 7 + days) / 30
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let period = StorePeriod(iso: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an ISO 8601 period: \(text)")
        }
        self = period
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
