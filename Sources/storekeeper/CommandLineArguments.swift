import Foundation

/// What the parser found for one command, already checked against its declaration: every
/// option is declared, required ones are present, choices are respected, the positional count
/// fits. Options given more than once accumulate only when declared repeatable.
struct CommandLineArguments: Sendable {
    /// The command's names from the root (`["appstore", "history"]`).
    var path: [String]
    var options: [String: [String]] = [:]
    var switches: Set<String> = []
    var positional: [String] = []
    /// Declared defaults, answered by `value(_:)` when the option is absent.
    var defaults: [String: String] = [:]

    func value(_ name: String) -> String? { options[name]?.last ?? defaults[name] }
    func values(_ name: String) -> [String] { options[name] ?? defaults[name].map { [$0] } ?? [] }
    func has(_ name: String) -> Bool { switches.contains(name) }

    /// For options required only in some cases (the declaration marks always-required ones).
    func require(_ name: String) throws(UsageError) -> String {
        guard let value = value(name) else { throw UsageError("missing \(name)") }
        return value
    }
}

/// A problem with the command line: printed with the command's usage on standard error, exit 2.
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

enum Input {
    /// Reads a file argument, or standard input for `-` / no argument. Bounded: nothing the
    /// CLI reads legitimately exceeds 8 MiB.
    static func read(_ path: String?) throws -> Data {
        let limit = 8 << 20
        let data: Data
        if let path, path != "-" {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } else {
            data = FileHandle.standardInput.readDataToEndOfFile()
        }
        guard data.count <= limit else { throw UsageError("input exceeds \(limit) bytes") }
        return data
    }

    static func text(_ argument: String?) throws -> String {
        String(decoding: try read(argument), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

enum Output {
    static func json<T: Encodable>(_ value: T) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try! encoder.encode(value), as: UTF8.self)
    }
}
