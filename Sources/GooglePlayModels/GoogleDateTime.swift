import Foundation

/// A `google-datetime` of the Play Developer API: RFC 3339 in UTC with `Z` and zero to nine
/// fractional digits (`"2024-05-01T10:00:00.123456Z"`). The text is kept as sent (re-encodes
/// unchanged) and read as a `Date` truncated to the millisecond, the precision the engine keeps.
/// Decoding refuses text that is not of that form.
/// - Note: Immutable value; `Sendable`.
public struct GoogleDateTime: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    public let text: String
    /// Milliseconds since 1970.
    public let milliseconds: Int64

    public init?(_ text: String) {
        guard let milliseconds = Self.parse(text) else { return nil }
        self.text = text
        self.milliseconds = milliseconds
    }

    /// The canonical text (`.SSS` fraction) of an instant, as the simulator writes it.
    public init(milliseconds: Int64) {
        self.milliseconds = milliseconds
        let seconds = Int64((Double(milliseconds) / 1000).rounded(.down))
        let fraction = milliseconds - seconds * 1000
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents(
            [.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: Double(seconds)))
        func two(_ value: Int?) -> String { String(format: "%02d", value ?? 0) }
        self.text =
            String(format: "%04d", parts.year ?? 0) + "-" + two(parts.month) + "-" + two(parts.day) + "T"
            + two(parts.hour) + ":" + two(parts.minute) + ":" + two(parts.second) + "."
            + String(format: "%03d", Int(fraction)) + "Z"
    }

    public init(_ date: Date) { self.init(milliseconds: Int64((date.timeIntervalSince1970 * 1000).rounded(.down))) }

    public var date: Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let value = GoogleDateTime(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an RFC 3339 UTC time")
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }

    public var description: String { text }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.milliseconds < rhs.milliseconds }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.milliseconds == rhs.milliseconds && lhs.text == rhs.text
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(text) }

    /// `YYYY-MM-DDTHH:MM:SS[.f{1,9}]Z` → milliseconds, fields range-checked.
    static func parse(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.count <= 30, bytes.last == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let byte = bytes[index]
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var millis = 0
        if bytes.count > 20 {
            // A fraction: "." then 1–9 digits before the "Z".
            let digits = bytes.count - 21
            guard bytes[19] == UInt8(ascii: "."), (1...9).contains(digits), let fraction = number(20..<(20 + digits))
            else { return nil }
            var scaled = fraction
            for _ in digits..<9 { scaled *= 10 }
            millis = scaled / 1_000_000
        } else if bytes[19] != UInt8(ascii: "Z") {
            return nil
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let components = DateComponents(
            year: year, month: month, day: day, hour: hour, minute: minute, second: min(second, 59))
        guard let date = calendar.date(from: components),
            calendar.component(.day, from: date) == day
        else { return nil }
        return Int64(date.timeIntervalSince1970.rounded()) * 1000 + Int64(millis)
    }
}
