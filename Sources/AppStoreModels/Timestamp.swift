import Foundation

/// An instant as Apple sends it: whole milliseconds since 1970-01-01T00:00:00Z.
///
/// Kept as an integer so that comparisons and arithmetic are exact. Xcode's StoreKit testing
/// sends fractional milliseconds (`1697679936049.7297`); they are truncated on input, as
/// Apple's libraries do. Encodes as an integer.
/// - Note: Immutable value; `Sendable`.
public struct Timestamp: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public let millisecondsSince1970: Int64

    public init(millisecondsSince1970: Int64) { self.millisecondsSince1970 = millisecondsSince1970 }

    public init(_ date: Date) {
        millisecondsSince1970 = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    public var date: Date { Date(timeIntervalSince1970: Double(millisecondsSince1970) / 1000) }
    public var secondsSince1970: Int64 {
        millisecondsSince1970 >= 0 ? millisecondsSince1970 / 1000 : (millisecondsSince1970 - 999) / 1000
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.millisecondsSince1970 < rhs.millisecondsSince1970
    }

    public func adding(milliseconds: Int64) -> Timestamp {
        Timestamp(millisecondsSince1970: millisecondsSince1970 + milliseconds)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let whole = try? container.decode(Int64.self) {
            millisecondsSince1970 = whole
            return
        }
        let value = try container.decode(Double.self)
        guard value.isFinite, abs(value) < 9.2e18 else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "date is not a finite number of milliseconds")
        }
        millisecondsSince1970 = Int64(value.rounded(.towardZero))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(millisecondsSince1970)
    }

    /// ISO 8601 with milliseconds, UTC: `2026-03-01T00:00:00.000Z`.
    public var description: String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
