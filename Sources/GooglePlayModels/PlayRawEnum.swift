/// A value of one of Google's enumerations as it travels on the wire (a number in a developer
/// notification, a string in the Play Developer API).
///
/// Google adds values without notice, so decoding never fails on an unknown raw value: `value`
/// is `nil` and `rawValue` keeps what Google sent, which re-encodes unchanged. The same shape as
/// `AppStoreModels.RawEnum`, kept separate so this module depends on Foundation only.
/// - Note: Immutable value; `Sendable`.
public struct PlayRawEnum<Known: RawRepresentable & Sendable & Hashable>: Sendable, Hashable, Codable,
    CustomStringConvertible
where Known.RawValue: Codable & Sendable & Hashable {
    public let rawValue: Known.RawValue

    public init(rawValue: Known.RawValue) { self.rawValue = rawValue }
    public init(_ known: Known) { self.rawValue = known.rawValue }

    /// The typed case, or `nil` for a value this build does not know yet.
    public var value: Known? { Known(rawValue: rawValue) }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(Known.RawValue.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { "\(rawValue)" }

    public static func == (lhs: PlayRawEnum, rhs: Known) -> Bool { lhs.rawValue == rhs.rawValue }
}

extension Optional {
    /// `purchase.subscriptionState == .active` reads naturally on an optional raw enum.
    public static func == <K>(lhs: Wrapped?, rhs: K) -> Bool where Wrapped == PlayRawEnum<K> {
        guard let lhs else { return false }
        return lhs.rawValue == rhs.rawValue
    }
}
