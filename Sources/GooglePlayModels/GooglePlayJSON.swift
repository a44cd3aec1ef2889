import Foundation

/// Decoding and encoding of Google's JSON: bounded in size before parsing, errors that name the
/// field path, and sorted keys on output so a re-encoded value is byte-stable.
public enum GooglePlayJSON {
    /// Decodes `data` as `T` after checking it is at most `maximumBytes` long and a JSON object.
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data, maximumBytes: Int = 1 << 20)
        throws(GooglePlayModelError) -> T
    {
        let name = String(describing: T.self)
        guard data.count <= maximumBytes else {
            throw GooglePlayModelError(
                .tooLarge, type: name, detail: "\(data.count) bytes, at most \(maximumBytes) accepted")
        }
        guard data.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "{") else {
            throw GooglePlayModelError(.notJSON, type: name)
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let error as DecodingError {
            throw describe(error, type: name)
        } catch let error as GooglePlayModelError {
            throw error
        } catch {
            throw GooglePlayModelError(.notJSON, type: name)
        }
    }

    public static func encode<T: Encodable>(_ value: T) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Our models hold only JSON-representable values; a failure here is a programming error.
        return try! encoder.encode(value)
    }

    /// The model error for a `DecodingError`, with the path spelled `lineItems[0].productId`.
    public static func describe(_ error: DecodingError, type: String) -> GooglePlayModelError {
        func path(_ keys: [any CodingKey], _ last: (any CodingKey)? = nil) -> String {
            (keys + (last.map { [$0] } ?? [])).map { key in
                key.intValue.map { "[\($0)]" } ?? key.stringValue
            }.joined(separator: ".").replacingOccurrences(of: ".[", with: "[")
        }
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return GooglePlayModelError(.wrongType, path: path(context.codingPath), type: type)
        case .keyNotFound(let key, let context):
            return GooglePlayModelError(.missingField, path: path(context.codingPath, key), type: type)
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty { return GooglePlayModelError(.notJSON, type: type) }
            return GooglePlayModelError(.invalidValue, path: path(context.codingPath), type: type)
        @unknown default:
            return GooglePlayModelError(.invalidValue, type: type)
        }
    }
}
