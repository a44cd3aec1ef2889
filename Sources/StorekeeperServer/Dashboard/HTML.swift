/// A fragment of HTML whose interpolations are escaped unless they are `HTML` themselves:
/// `"<td>\(appUserId)</td>" as HTML` escapes the id, so markup cannot come from data by
/// accident. Escaping covers text and double-quoted attribute values (`&`, `<`, `>`, `"`, `'`).
/// - Note: Immutable value; `Sendable`.
public struct HTML: Sendable, Hashable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The markup, ready to send.
    public private(set) var markup: String

    public init(stringLiteral value: String) { markup = value }

    public init(stringInterpolation: StringInterpolation) { markup = stringInterpolation.markup }

    /// Markup built elsewhere and known to be safe (never data).
    init(trusted markup: String) { self.markup = markup }

    public var description: String { markup }

    /// Builds markup: literal segments as written, interpolated strings escaped.
    public struct StringInterpolation: StringInterpolationProtocol {
        var markup = ""

        public init(literalCapacity: Int, interpolationCount: Int) {
            markup.reserveCapacity(literalCapacity + interpolationCount * 16)
        }

        public mutating func appendLiteral(_ literal: String) { markup += literal }

        public mutating func appendInterpolation(_ html: HTML) { markup += html.markup }

        public mutating func appendInterpolation(_ html: [HTML]) {
            for fragment in html { markup += fragment.markup }
        }

        public mutating func appendInterpolation(_ text: String) { markup += HTML.escape(text) }

        public mutating func appendInterpolation(_ text: String?) { markup += HTML.escape(text ?? "") }

        public mutating func appendInterpolation(_ number: Int) { markup += String(number) }

        public mutating func appendInterpolation(_ number: Int64) { markup += String(number) }
    }

    /// `text` with the five characters that can end text or a quoted attribute replaced by
    /// character references.
    public static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// The fragments one after the other.
    public static func joined(_ fragments: [HTML]) -> HTML {
        HTML(trusted: fragments.map(\.markup).joined())
    }
}
