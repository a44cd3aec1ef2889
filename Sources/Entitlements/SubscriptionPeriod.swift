import AppStoreModels

/// A length of service in calendar units, written as Apple writes it: an ISO 8601 duration
/// (`P1W`, `P1M`, `P1Y`, `P3D`).
///
/// Months and years are calendar months (Jan 31 + P1M = Feb 28), as App Store renewals are.
/// - Note: Immutable value; `Sendable`.
public struct SubscriptionPeriod: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The calendar unit of a period.
    public enum Unit: String, Sendable, Hashable, Codable, CaseIterable {
        case day = "D"
        case week = "W"
        case month = "M"
        case year = "Y"
    }

    public let value: Int
    public let unit: Unit

    public init(value: Int, unit: Unit) {
        self.value = value
        self.unit = unit
    }

    /// Parses `P<n><D|W|M|Y>`; returns `nil` for anything else (combined forms are not used
    /// by App Store products).
    public init?(iso8601 text: String) {
        guard text.count >= 3, text.first == "P", let unit = Unit(rawValue: String(text.last!)),
            let value = Int(text.dropFirst().dropLast()), value > 0
        else { return nil }
        self.init(value: value, unit: unit)
    }

    public var iso8601: String { "P\(value)\(unit.rawValue)" }
    public var description: String { iso8601 }

    /// The instant one period after `start`.
    public func end(from start: Timestamp) -> Timestamp {
        switch unit {
        case .day: return start.adding(milliseconds: Int64(value) * CivilCalendar.millisecondsPerDay)
        case .week: return start.adding(milliseconds: Int64(value) * 7 * CivilCalendar.millisecondsPerDay)
        case .month: return CivilCalendar.adding(months: Int64(value), to: start)
        case .year: return CivilCalendar.adding(months: Int64(value) * 12, to: start)
        }
    }

    /// An approximate length in days, only to compare durations (crossgrade classification).
    var approximateDays: Int {
        switch unit {
        case .day: return value
        case .week: return value * 7
        case .month: return value * 30
        case .year: return value * 365
        }
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let period = SubscriptionPeriod(iso8601: text) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "not an ISO 8601 period: \(text)"))
        }
        self = period
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(iso8601)
    }
}
