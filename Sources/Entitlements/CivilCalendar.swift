import AppStoreModels

/// Proleptic Gregorian calendar arithmetic in UTC on whole milliseconds.
///
/// The engine must give the same answer on every machine, so it does not use `Calendar` or
/// the process time zone: Apple's subscription periods and the dates in our reasons are UTC.
/// - Note: Stateless; `Sendable`.
enum CivilCalendar {
    static let millisecondsPerDay: Int64 = 86_400_000

    struct Civil: Equatable {
        var year: Int64
        var month: Int64  // 1...12
        var day: Int64  // 1...31
    }

    /// Days since 1970-01-01 of a civil date (H. Hinnant's algorithm, exact for all years).
    static func days(from civil: Civil) -> Int64 {
        let y = civil.month <= 2 ? civil.year - 1 : civil.year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let monthIndex = civil.month > 2 ? civil.month - 3 : civil.month + 9
        let dayOfYear = (153 * monthIndex + 2) / 5 + civil.day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civil(fromDays days: Int64) -> Civil {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return Civil(year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month: month, day: day)
    }

    static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2:
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
            return leap ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Adds calendar months, clamping the day to the target month's length
    /// (Jan 31 + 1 month = Feb 28/29), the way subscription renewal dates move.
    static func adding(months: Int64, to instant: Timestamp) -> Timestamp {
        let ms = instant.millisecondsSince1970
        let dayNumber = floorDiv(ms, millisecondsPerDay)
        let timeOfDay = ms - dayNumber * millisecondsPerDay
        let civil = civil(fromDays: dayNumber)
        let monthsSinceYearZero = civil.year * 12 + (civil.month - 1) + months
        let year = floorDiv(monthsSinceYearZero, 12)
        let month = monthsSinceYearZero - year * 12 + 1
        let day = min(civil.day, daysInMonth(year: year, month: month))
        let target = days(from: Civil(year: year, month: month, day: day))
        return Timestamp(millisecondsSince1970: target * millisecondsPerDay + timeOfDay)
    }

    /// `2026-03-01T00:00:00Z`, with milliseconds only when there are some.
    static func format(_ instant: Timestamp) -> String {
        let ms = instant.millisecondsSince1970
        let dayNumber = floorDiv(ms, millisecondsPerDay)
        var rest = ms - dayNumber * millisecondsPerDay
        let civil = civil(fromDays: dayNumber)
        let hours = rest / 3_600_000
        rest -= hours * 3_600_000
        let minutes = rest / 60_000
        rest -= minutes * 60_000
        let seconds = rest / 1000
        let millis = rest - seconds * 1000
        var text = "\(pad(civil.year, 4))-\(pad(civil.month, 2))-\(pad(civil.day, 2))"
        text += "T\(pad(hours, 2)):\(pad(minutes, 2)):\(pad(seconds, 2))"
        if millis != 0 { text += ".\(pad(millis, 3))" }
        return text + "Z"
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let quotient = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? quotient - 1 : quotient
    }
}

extension Timestamp {
    /// The instant as support staff read it in reasons: `2026-03-01T00:00:00Z`.
    var humanReadable: String { CivilCalendar.format(self) }
}
