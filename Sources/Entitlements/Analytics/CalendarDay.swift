import AppStoreModels

/// One UTC calendar day (`2026-03-01`), the unit of analytics periods and of the dated
/// settings (Small Business Program periods, exchange rates).
///
/// Kept as a day number since 1970-01-01 so comparisons and ranges are integer arithmetic;
/// encodes as `YYYY-MM-DD`.
/// - Note: Immutable value; `Sendable`.
public struct CalendarDay: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public let daysSince1970: Int64

    public init(daysSince1970: Int64) { self.daysSince1970 = daysSince1970 }

    /// The day an instant falls on, in UTC.
    public init(containing instant: Timestamp) {
        daysSince1970 = CivilCalendar.floorDiv(instant.millisecondsSince1970, CivilCalendar.millisecondsPerDay)
    }

    public init(year: Int, month: Int, day: Int) {
        daysSince1970 = CivilCalendar.days(from: .init(year: Int64(year), month: Int64(month), day: Int64(day)))
    }

    /// Parses exactly `YYYY-MM-DD` of a day that exists (years 1970…9999); `nil` otherwise.
    public init?(iso8601 text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), year >= 1970,
            (1...12).contains(month), day >= 1, day <= CivilCalendar.daysInMonth(year: year, month: month)
        else { return nil }
        daysSince1970 = CivilCalendar.days(from: .init(year: year, month: month, day: day))
    }

    /// Midnight UTC at the start of the day.
    public var start: Timestamp {
        Timestamp(millisecondsSince1970: daysSince1970 * CivilCalendar.millisecondsPerDay)
    }

    /// Midnight UTC at the start of the next day (the exclusive end of this day).
    public var end: Timestamp { adding(days: 1).start }

    public func adding(days: Int64) -> CalendarDay { CalendarDay(daysSince1970: daysSince1970 + days) }

    public var year: Int { Int(CivilCalendar.civil(fromDays: daysSince1970).year) }
    public var month: Int { Int(CivilCalendar.civil(fromDays: daysSince1970).month) }
    public var day: Int { Int(CivilCalendar.civil(fromDays: daysSince1970).day) }

    public var iso8601: String { String(CivilCalendar.format(start).prefix(10)) }
    public var description: String { iso8601 }

    public static func < (lhs: CalendarDay, rhs: CalendarDay) -> Bool { lhs.daysSince1970 < rhs.daysSince1970 }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let day = CalendarDay(iso8601: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "expected a day as YYYY-MM-DD")
        }
        self = day
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(iso8601)
    }
}
