import Foundation

// Reading and writing the legacy (verifyReceipt, Server Notifications V1) JSON, where Apple sends
// numbers and booleans as strings ("1", "true") or as JSON scalars depending on the field and the
// year, and every date three times (`x_ms`, `x` in GMT, `x_pst`). Internal: the public models
// expose typed `Int64`, `Bool` and `Timestamp` only.

/// Any JSON key, because legacy keys are snake_case, hyphenated, and built from date stems.
struct LegacyKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// How a boolean goes back on the wire: Apple writes `"true"`/`"false"` in receipt entries and
/// `"1"`/`"0"` in pending renewal info.
enum LegacyBoolSpelling {
    case word
    case digit
}

struct LegacyDecodingContainer {
    let container: KeyedDecodingContainer<LegacyKey>

    init(_ decoder: any Decoder) throws {
        container = try decoder.container(keyedBy: LegacyKey.self)
    }

    /// `nil` for an absent key, JSON `null` or `""`: Apple's sandbox sends empty strings for
    /// fields that do not apply, which mean "absent", not "malformed".
    private func present(_ key: LegacyKey) throws -> Bool {
        guard container.contains(key), try !container.decodeNil(forKey: key) else { return false }
        if let text = try? container.decode(String.self, forKey: key), text.isEmpty { return false }
        return true
    }

    private func wrongType(_ type: Any.Type, _ key: LegacyKey) -> DecodingError {
        .typeMismatch(
            type,
            .init(codingPath: container.codingPath + [key], debugDescription: "unexpected JSON type"))
    }

    private func invalid(_ key: LegacyKey, _ why: String) -> DecodingError {
        .dataCorruptedError(forKey: key, in: container, debugDescription: why)
    }

    func string(_ name: String) throws -> String? {
        let key = LegacyKey(name)
        guard try present(key) else { return nil }
        if let text = try? container.decode(String.self, forKey: key) { return text }
        // Identifiers are strings in Apple's documentation but some old responses carry numbers.
        if let number = try? container.decode(Int64.self, forKey: key) { return String(number) }
        throw wrongType(String.self, key)
    }

    func int64(_ name: String) throws -> Int64? {
        let key = LegacyKey(name)
        guard try present(key) else { return nil }
        if let number = try? container.decode(Int64.self, forKey: key) { return number }
        if let text = try? container.decode(String.self, forKey: key) {
            guard let number = Int64(text.trimmingCharacters(in: .whitespaces)) else {
                throw invalid(key, "not an integer")
            }
            return number
        }
        throw wrongType(Int64.self, key)
    }

    func bool(_ name: String) throws -> Bool? {
        let key = LegacyKey(name)
        guard try present(key) else { return nil }
        if let flag = try? container.decode(Bool.self, forKey: key) { return flag }
        if let number = try? container.decode(Int64.self, forKey: key) {
            switch number {
            case 0: return false
            case 1: return true
            default: throw invalid(key, "not a boolean")
            }
        }
        if let text = try? container.decode(String.self, forKey: key) {
            switch text.lowercased() {
            case "true", "1": return true
            case "false", "0": return false
            default: throw invalid(key, "not a boolean")
            }
        }
        throw wrongType(Bool.self, key)
    }

    /// The instant of `stem`: `stem_ms` when present (exact), else the GMT text, else the
    /// Pacific text (both whole seconds).
    func date(_ stem: String) throws -> Timestamp? {
        if let milliseconds = try int64(stem + "_ms") {
            return Timestamp(millisecondsSince1970: milliseconds)
        }
        for name in [stem, stem + "_pst"] {
            guard let text = try string(name) else { continue }
            guard let milliseconds = LegacyDateText.parse(text) else {
                throw invalid(LegacyKey(name), "not a date")
            }
            return Timestamp(millisecondsSince1970: milliseconds)
        }
        return nil
    }

    func rawEnum<Known>(_ name: String, _ type: Known.Type) throws -> RawEnum<Known>?
    where Known.RawValue == Int32 {
        guard let number = try int64(name) else { return nil }
        guard let narrow = Int32(exactly: number) else {
            throw invalid(LegacyKey(name), "out of range")
        }
        return RawEnum(rawValue: narrow)
    }

    func rawEnum<Known>(_ name: String, _ type: Known.Type) throws -> RawEnum<Known>?
    where Known.RawValue == String {
        try string(name).map { RawEnum(rawValue: $0) }
    }

    func decode<T: Decodable>(_ type: T.Type, _ name: String) throws -> T? {
        try container.decodeIfPresent(T.self, forKey: LegacyKey(name))
    }
}

struct LegacyEncodingContainer {
    var container: KeyedEncodingContainer<LegacyKey>

    init(_ encoder: any Encoder) {
        container = encoder.container(keyedBy: LegacyKey.self)
    }

    mutating func string(_ value: String?, _ name: String) throws {
        try container.encodeIfPresent(value, forKey: LegacyKey(name))
    }

    /// As Apple writes it in receipts: a decimal string.
    mutating func int64AsString(_ value: Int64?, _ name: String) throws {
        try container.encodeIfPresent(value.map { String($0) }, forKey: LegacyKey(name))
    }

    mutating func int64(_ value: Int64?, _ name: String) throws {
        try container.encodeIfPresent(value, forKey: LegacyKey(name))
    }

    mutating func boolAsString(_ value: Bool?, _ name: String, _ spelling: LegacyBoolSpelling) throws {
        guard let value else { return }
        let text: String
        switch spelling {
        case .word: text = value ? "true" : "false"
        case .digit: text = value ? "1" : "0"
        }
        try container.encode(text, forKey: LegacyKey(name))
    }

    mutating func bool(_ value: Bool?, _ name: String) throws {
        try container.encodeIfPresent(value, forKey: LegacyKey(name))
    }

    /// All three spellings, as Apple sends them, so that any reader of the legacy format finds its field.
    mutating func date(_ value: Timestamp?, _ stem: String) throws {
        guard let value else { return }
        try container.encode(String(value.millisecondsSince1970), forKey: LegacyKey(stem + "_ms"))
        try container.encode(
            LegacyDateText.format(value.millisecondsSince1970, in: .gmt), forKey: LegacyKey(stem))
        try container.encode(
            LegacyDateText.format(value.millisecondsSince1970, in: .pacific),
            forKey: LegacyKey(stem + "_pst"))
    }

    mutating func rawEnumAsString<Known>(_ value: RawEnum<Known>?, _ name: String) throws
    where Known.RawValue == Int32 {
        try container.encodeIfPresent(value.map { String($0.rawValue) }, forKey: LegacyKey(name))
    }

    mutating func rawEnum<Known>(_ value: RawEnum<Known>?, _ name: String) throws {
        try container.encodeIfPresent(value, forKey: LegacyKey(name))
    }

    mutating func encode<T: Encodable>(_ value: T?, _ name: String) throws {
        try container.encodeIfPresent(value, forKey: LegacyKey(name))
    }
}

/// Apple's legacy date text: `2023-10-19 01:45:36 Etc/GMT`, `2023-10-18 18:45:36 America/Los_Angeles`.
/// Done with integer calendar arithmetic rather than `DateFormatter`, which is slow, locale-bound
/// and not `Sendable`.
enum LegacyDateText {
    enum Zone {
        case gmt
        case pacific

        var identifier: String {
            switch self {
            case .gmt: return "Etc/GMT"
            case .pacific: return "America/Los_Angeles"
            }
        }
    }

    /// Milliseconds since 1970 (whole seconds), or `nil` if the text is not in Apple's format or
    /// names an unknown time zone. ISO 8601 `…T…Z` is accepted as well, for old receipts.
    static func parse(_ text: String) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let zoneName: String
        let civilText: String
        if let space = trimmed.lastIndex(of: " "), trimmed.firstIndex(of: " ") != space {
            civilText = String(trimmed[..<space])
            zoneName = String(trimmed[trimmed.index(after: space)...])
        } else if trimmed.hasSuffix("Z"), trimmed.contains("T") {
            civilText = String(trimmed.dropLast()).replacingOccurrences(of: "T", with: " ")
            zoneName = "GMT"
        } else {
            return nil
        }
        guard let zone = TimeZone(identifier: zoneName), let local = civilSeconds(civilText) else {
            return nil
        }
        // Local wall time → UTC: the zone's offset is looked up at the guessed instant, twice, so
        // that instants next to a daylight-saving switch resolve to the right side. The repeated
        // hour when daylight time ends is ambiguous in Apple's text; it reads as the earlier instant.
        let firstGuess =
            local - Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(local))))
        let utc =
            local - Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(firstGuess))))
        return utc * 1000
    }

    static func format(_ milliseconds: Int64, in zone: Zone) -> String {
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let timeZone = TimeZone(identifier: zone.identifier) ?? TimeZone(secondsFromGMT: 0)!
        let local =
            seconds + Int64(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(seconds))))
        let days = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        let secondOfDay = local - days * 86_400
        let (year, month, day) = CivilDate.date(fromDays: days)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let yearText =
            year >= 0 && year < 1000
            ? String(repeating: "0", count: 4 - String(year).count) + String(year) : String(year)
        return
            "\(yearText)-\(two(month))-\(two(day)) \(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) \(zone.identifier)"
    }

    /// `yyyy-MM-dd HH:mm:ss` read as if it were UTC.
    private static func civilSeconds(_ text: String) -> Int64? {
        let parts = text.split(whereSeparator: { $0 == "-" || $0 == " " || $0 == ":" })
        guard parts.count == 6 else { return nil }
        let numbers = parts.compactMap { Int64($0) }
        guard numbers.count == 6 else { return nil }
        let (year, month, day, hour, minute, second) = (
            numbers[0], numbers[1], numbers[2], numbers[3], numbers[4], numbers[5]
        )
        guard (1...12).contains(month), (1...31).contains(day), (0...23).contains(hour),
            (0...59).contains(minute),
            (0...60).contains(second)
        else { return nil }
        return CivilDate.days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second
    }
}
