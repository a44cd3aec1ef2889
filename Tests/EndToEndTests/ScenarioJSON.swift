import AppStoreModels
import Foundation

/// The parts of a CustomerInfo a scenario compares exactly.
struct CustomerInfoFields: Decodable {
    var entitlements: [String: JSONValue]?
    var subscriptions: [String: JSONValue]?
}

/// How a scenario's exact expectations meet Storekeeper's JSON: equal values, objects with the
/// same keys, and an instant written `2025-12-01T00:00:00Z` (or with milliseconds) for the
/// milliseconds since 1970 that CustomerInfo holds.
enum ScenarioJSON {
    static func matches(_ expected: JSONValue, _ actual: JSONValue) -> Bool {
        switch (expected, actual) {
        case (.object(let want), .object(let got)):
            return want.keys.sorted() == got.keys.sorted()
                && want.allSatisfy { key, value in got[key].map { matches(value, $0) } ?? false }
        case (.array(let want), .array(let got)):
            return want.count == got.count && zip(want, got).allSatisfy { matches($0, $1) }
        case (.string(let text), .integer(let millis)):
            return text == instant(millis) || text == Timestamp(millisecondsSince1970: millis).description
        default:
            return expected == actual
        }
    }

    /// `value` with each placeholder (`{token:…}`) in its strings replaced by what it stands for.
    static func resolve(_ value: JSONValue, _ placeholders: [String: String]) -> JSONValue {
        switch value {
        case .string(let text) where text.contains("{"):
            return .string(
                placeholders.reduce(text) { $0.replacingOccurrences(of: $1.key, with: $1.value) })
        case .object(let members): return .object(members.mapValues { resolve($0, placeholders) })
        case .array(let items): return .array(items.map { resolve($0, placeholders) })
        default: return value
        }
    }

    /// An instant as the "why" texts write it: seconds precision unless it has milliseconds.
    static func instant(_ millis: Int64) -> String {
        Timestamp(millisecondsSince1970: millis).description.replacingOccurrences(of: ".000Z", with: "Z")
    }

    /// Sorted JSON with every instant-sized integer shown as an instant, ready to paste.
    static func text(_ value: JSONValue) -> String {
        String(decoding: AppStoreJSON.encode(readable(value)), as: UTF8.self)
    }

    private static func readable(_ value: JSONValue) -> JSONValue {
        switch value {
        // After 2001 and before 2100 in milliseconds: an instant, not a count.
        case .integer(let number) where number > 1_000_000_000_000 && number < 4_102_444_800_000:
            return .string(instant(number))
        case .object(let members): return .object(members.mapValues(readable))
        case .array(let items): return .array(items.map(readable))
        default: return value
        }
    }
}
