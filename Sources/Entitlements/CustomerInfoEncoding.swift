import AppStoreModels

/// A `CustomerInfo`'s canonical JSON, byte for byte `AppStoreJSON.encode(info)`, built so that
/// a long history is not encoded again on every evaluation.
///
/// The parts that grow with the history (`revenue`, one entry per transaction, and `eventIds`)
/// are encoded apart and spliced into the encoding of the rest; revenue entries equal to one in
/// `reusing` keep the text encoded then. The canonical encoding has no whitespace and its
/// nested values are written the same wherever they sit, so the splice gives the same bytes
/// (the property tests compare it with Foundation's `JSONEncoder` over random customers).
/// - Note: Immutable value; `Sendable`.
public struct CustomerInfoEncoding: Sendable {
    /// The JSON text to store.
    public let json: String
    private let revenue: [TransactionRevenue]
    private let revenueJSON: [String]

    public init(_ info: CustomerInfo, reusing previous: CustomerInfoEncoding? = nil) {
        var skeleton = info
        skeleton.revenue = []
        skeleton.eventIds = []
        let rest = Self.text(skeleton)
        var entries: [String] = []
        entries.reserveCapacity(info.revenue.count)
        var byValue: [TransactionRevenue: Int]?
        for (index, entry) in info.revenue.enumerated() {
            if let previous {
                if index < previous.revenue.count, previous.revenue[index] == entry {
                    entries.append(previous.revenueJSON[index])
                    continue
                }
                if byValue == nil {
                    byValue = Dictionary(
                        previous.revenue.indices.map { (previous.revenue[$0], $0) }, uniquingKeysWith: { a, _ in a })
                }
                if let match = byValue?[entry] {
                    entries.append(previous.revenueJSON[match])
                    continue
                }
            }
            entries.append(Self.text(entry))
        }
        let spliced = Self.splice(
            rest,
            [
                ("\"eventIds\":[]", "\"eventIds\":" + Self.text(info.eventIds)),
                ("\"revenue\":[]", "\"revenue\":[" + entries.joined(separator: ",") + "]"),
            ])
        json = spliced ?? Self.text(info)
        revenue = info.revenue
        revenueJSON = entries
    }

    /// `text` with each marker (which must occur exactly once) replaced; `nil` otherwise.
    /// A marker `"key":[]` cannot occur inside an encoded string (its quotes are escaped) nor
    /// under a nested key (those hold objects), so it is the top-level member.
    private static func splice(_ text: String, _ replacements: [(marker: String, with: String)]) -> String? {
        let bytes = Array(text.utf8)
        var found: [(start: Int, end: Int, with: String)] = []
        for (marker, replacement) in replacements {
            let needle = Array(marker.utf8)
            var matches: [Int] = []
            var index = 0
            while index + needle.count <= bytes.count {
                if bytes[index] == needle[0], bytes[index..<index + needle.count].elementsEqual(needle) {
                    matches.append(index)
                }
                index += 1
            }
            guard matches.count == 1 else { return nil }
            found.append((matches[0], matches[0] + needle.count, replacement))
        }
        found.sort { $0.start < $1.start }
        var result = ""
        var cursor = 0
        for part in found {
            guard part.start >= cursor else { return nil }
            result += String(decoding: bytes[cursor..<part.start], as: UTF8.self)
            result += part.with
            cursor = part.end
        }
        result += String(decoding: bytes[cursor...], as: UTF8.self)
        return result
    }

    // Member by member where `AppStoreJSON.encode` writes with its own canonical writer (Linux),
    // whose bytes `CustomerInfoJSON` reproduces; Foundation's elsewhere.
    private static func text(_ info: CustomerInfo) -> String {
        #if os(Linux)
            CustomerInfoJSON.text(info)
        #else
            AppStoreJSON.encodeText(info)
        #endif
    }

    private static func text(_ revenue: TransactionRevenue) -> String {
        #if os(Linux)
            CustomerInfoJSON.text(revenue)
        #else
            AppStoreJSON.encodeText(revenue)
        #endif
    }

    private static func text(_ strings: [String]) -> String {
        #if os(Linux)
            CustomerInfoJSON.text(strings)
        #else
            AppStoreJSON.encodeText(strings)
        #endif
    }
}
