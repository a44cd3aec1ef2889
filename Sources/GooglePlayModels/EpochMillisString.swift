import Foundation

/// An instant as Google writes it in notifications and in `ProductPurchase`: milliseconds since
/// 1970 as a decimal *string* (`"1503349566168"`), because JSON numbers lose precision in
/// JavaScript. Decoding refuses anything but an optional `-` and digits that fit an `Int64`.
/// - Note: Immutable value; `Sendable`.
public struct EpochMillisString: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    public let milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    public init(_ date: Date) { self.milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }

    public var date: Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard text.count <= 20, let value = Int64(text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "not a decimal count of milliseconds")
        }
        milliseconds = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(String(milliseconds))
    }

    public var description: String { String(milliseconds) }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.milliseconds < rhs.milliseconds }
}
