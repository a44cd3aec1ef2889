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

    /// Days since 1970-01-01 of a civil date.
    static func days(from civil: Civil) -> Int64 {
        CivilDate.days(year: civil.year, month: civil.month, day: civil.day)
    }

    static func civil(fromDays days: Int64) -> Civil {
        let (year, month, day) = CivilDate.date(fromDays: days)
        return Civil(year: year, month: month, day: day)
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
    ///
    /// Written digit by digit into one buffer: every evaluation formats an instant into the
    /// summary of each event of the history, and building it from padded pieces cost a dozen
    /// small strings each.
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
        guard (0...9999).contains(civil.year) else {
            // Outside four digits: the year as it is (never for Apple's dates).
            var text = "\(pad(civil.year, 4))-\(pad(civil.month, 2))-\(pad(civil.day, 2))"
            text += "T\(pad(hours, 2)):\(pad(minutes, 2)):\(pad(seconds, 2))"
            if millis != 0 { text += ".\(pad(millis, 3))" }
            return text + "Z"
        }
        return String(unsafeUninitializedCapacity: 24) { buffer in
            var count = 0
            func put(_ value: Int64, digits: Int) {
                var divisor: Int64 = 1
                for _ in 1..<digits { divisor *= 10 }
                var remaining = value
                while divisor > 0 {
                    buffer[count] = UInt8(ascii: "0") + UInt8(remaining / divisor)
                    remaining %= divisor
                    divisor /= 10
                    count += 1
                }
            }
            func put(_ byte: Unicode.Scalar) {
                buffer[count] = UInt8(ascii: byte)
                count += 1
            }
            put(civil.year, digits: 4)
            put("-")
            put(civil.month, digits: 2)
            put("-")
            put(civil.day, digits: 2)
            put("T")
            put(hours, digits: 2)
            put(":")
            put(minutes, digits: 2)
            put(":")
            put(seconds, digits: 2)
            if millis != 0 {
                put(".")
                put(millis, digits: 3)
            }
            put("Z")
            return count
        }
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
