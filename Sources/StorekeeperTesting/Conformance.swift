import Foundation

/// Locates `../shared/conformance` beside the checkout (Apple's library test vectors and
/// roots). Tests skip with `Conformance.skipMessage` where it is absent; it is never copied
/// into the project.
public enum Conformance {
    /// The repository root, found from this source file's location.
    public static let repositoryRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }  // Sources/StorekeeperTesting/Conformance.swift
        return url
    }()

    public static let appleLibrary =
        repositoryRoot
        .deletingLastPathComponent().appendingPathComponent("shared/conformance/apple-library")

    public static var isAvailable: Bool {
        FileManager.default.fileExists(atPath: appleLibrary.appendingPathComponent("README.md").path)
    }

    public static let skipMessage =
        "../shared/conformance/apple-library is absent beside the checkout: Apple conformance vectors skipped"

    public static func url(_ relativePath: String) -> URL { appleLibrary.appendingPathComponent(relativePath) }

    public static func data(_ relativePath: String) throws -> Data { try Data(contentsOf: url(relativePath)) }

    public static func text(_ relativePath: String) throws -> String {
        String(decoding: try data(relativePath), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
