import Foundation

/// Why a JSON body could not be read as an App Store model. `path` names the field
/// (`data.appAppleId`), so an operator can see what Apple (or a forger) sent wrong.
/// - Note: Immutable value; `Sendable`.
public struct ModelDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        case wrongType = "model.wrongType"
        case missingField = "model.missingField"
        case invalidValue = "model.invalidValue"
        case notJSON = "model.notJSON"
    }
    public let kind: Kind
    public let path: String
    public let type: String

    public var description: String {
        switch kind {
        case .wrongType: return "\(type): field '\(path)' has the wrong JSON type"
        case .missingField: return "\(type): required field '\(path)' is missing"
        case .invalidValue: return "\(type): field '\(path)' has an invalid value"
        case .notJSON: return "\(type): body is not valid JSON"
        }
    }
}

/// Decoding and encoding of App Store JSON with Apple's conventions (epoch-millisecond dates,
/// omitted optionals) and errors that name the field path.
public enum AppStoreJSON {
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws(ModelDecodingError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let error as DecodingError {
            throw describe(error, type: String(describing: T.self))
        } catch {
            throw ModelDecodingError(kind: .notJSON, path: "", type: String(describing: T.self))
        }
    }

    /// Sorted keys so that a re-encoded payload is byte-stable (ids, ETags, tests). Written by
    /// `CanonicalJSONWriter` when it covers the value, by Foundation otherwise: the same bytes.
    public static func encode<T: Encodable>(_ value: T) -> Data {
        #if os(Linux)
            let writer = CanonicalJSONWriter()
            if writer.encodeSupported(value) { return writer.data }
        #endif
        return foundationEncode(value)
    }

    /// `encode(value)` as text.
    public static func encodeText<T: Encodable>(_ value: T) -> String {
        #if os(Linux)
            if let text = CanonicalJSONWriter().encodeDocument(value) { return text }
        #endif
        return String(decoding: foundationEncode(value), as: UTF8.self)
    }

    /// The reference encoding: Foundation's `JSONEncoder` with sorted keys and unescaped slashes.
    package static func foundationEncode<T: Encodable>(_ value: T) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Our models hold only JSON-representable values; a failure here is a programming error.
        return try! encoder.encode(value)
    }

    /// The model error for a `DecodingError` of `type`, with the field path spelled
    /// `data.items[0].price`; shared by every decoder of Apple's JSON (signed payloads too).
    public static func describe(_ error: DecodingError, type: String) -> ModelDecodingError {
        func path(_ keys: [any CodingKey], _ last: (any CodingKey)? = nil) -> String {
            (keys + (last.map { [$0] } ?? [])).map { key in
                key.intValue.map { "[\($0)]" } ?? key.stringValue
            }.joined(separator: ".").replacingOccurrences(of: ".[", with: "[")
        }
        switch error {
        case .typeMismatch(_, let context):
            return ModelDecodingError(kind: .wrongType, path: path(context.codingPath), type: type)
        case .valueNotFound(_, let context):
            return ModelDecodingError(kind: .wrongType, path: path(context.codingPath), type: type)
        case .keyNotFound(let key, let context):
            return ModelDecodingError(kind: .missingField, path: path(context.codingPath, key), type: type)
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                return ModelDecodingError(kind: .notJSON, path: "", type: type)
            }
            return ModelDecodingError(kind: .invalidValue, path: path(context.codingPath), type: type)
        @unknown default:
            return ModelDecodingError(kind: .invalidValue, path: "", type: type)
        }
    }
}
