import AppStoreModels
import Foundation
import Testing

/// Apple's conformance corpus, found relative to this file: `<repo>/../shared/conformance/apple-library`.
enum Corpus {
    static let root: URL = URL(fileURLWithPath: #filePath)
        .resolvingSymlinksInPath()  // a scratch package may link this folder in
        .deletingLastPathComponent()  // AppStoreModelsTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // repository root
        .appendingPathComponent("../shared/conformance/apple-library")
        .standardized

    static let isAvailable = FileManager.default.fileExists(
        atPath: root.appendingPathComponent("models").path)

    static let missingMessage: Comment =
        "Apple conformance corpus not found at ../shared/conformance/apple-library (relative to the repository root)"

    static func data(_ relativePath: String) throws -> Data {
        try Data(contentsOf: root.appendingPathComponent(relativePath))
    }

    static func model(_ name: String) throws -> Data { try data("models/" + name) }

    static func modelNames(prefix: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("models").path)
            .filter { $0.hasPrefix(prefix) && $0.hasSuffix(".json") }
            .sorted()
    }
}

/// Decodes, re-encodes with `AppStoreJSON.encode`, decodes again.
func reencoded<T: Codable>(_ value: T) throws -> T {
    try AppStoreJSON.decode(T.self, from: AppStoreJSON.encode(value))
}

/// Decodes `data`, checks decode → encode → decode gives an equal value, and that the re-encoded
/// JSON carries exactly the fields and values of the original (UUID spelling aside), so that no
/// field Apple sent is dropped. Returns the decoded value.
@discardableResult
func decodeLosslessly<T: Codable & Equatable>(
    _ type: T.Type, _ data: Data, sourceLocation: SourceLocation = #_sourceLocation
) throws -> T {
    let value = try AppStoreJSON.decode(T.self, from: data)
    let again = try reencoded(value)
    #expect(again == value, "round trip changed the value", sourceLocation: sourceLocation)
    let original = try AppStoreJSON.decode(JSONValue.self, from: data).normalized
    let written = try AppStoreJSON.decode(JSONValue.self, from: AppStoreJSON.encode(value)).normalized
    #expect(
        written == original, "re-encoded JSON differs from the original", sourceLocation: sourceLocation
    )
    // The canonical writer writes Foundation's bytes, or leaves the value to Foundation.
    #expect(
        AppStoreJSON.encode(value) == AppStoreJSON.foundationEncode(value),
        "AppStoreJSON.encode differs from Foundation's JSONEncoder", sourceLocation: sourceLocation)
    return value
}

extension JSONValue {
    /// Foundation writes UUIDs upper-case; Apple writes them lower-case. Both are the same UUID.
    var normalized: JSONValue {
        switch self {
        case .string(let text) where UUID(uuidString: text) != nil: return .string(text.lowercased())
        case .array(let values): return .array(values.map(\.normalized))
        case .object(let members): return .object(members.mapValues(\.normalized))
        default: return self
        }
    }
}

extension String {
    var utf8Data: Data { Data(utf8) }
}
