import Foundation

/// A small parser for `--flag value`, `--switch` and positional arguments; repeated options
/// accumulate (`--root a --root b`).
struct CommandLineArguments {
    private(set) var options: [String: [String]] = [:]
    private(set) var switches: Set<String> = []
    private(set) var positional: [String] = []

    init(_ arguments: ArraySlice<String>, switches known: Set<String>) throws(UsageError) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            if argument == "-" || !argument.hasPrefix("--") {
                positional.append(argument)
            } else if known.contains(argument) {
                switches.insert(argument)
            } else {
                guard let value = iterator.next() else { throw UsageError("\(argument) needs a value") }
                options[argument, default: []].append(value)
            }
        }
    }

    func value(_ name: String) -> String? { options[name]?.last }
    func values(_ name: String) -> [String] { options[name] ?? [] }
    func has(_ name: String) -> Bool { switches.contains(name) }

    func require(_ name: String) throws(UsageError) -> String {
        guard let value = value(name) else { throw UsageError("missing \(name)") }
        return value
    }

    func allowOnly(_ names: Set<String>) throws(UsageError) {
        if let unknown = options.keys.first(where: { !names.contains($0) }) {
            throw UsageError("unknown option \(unknown)")
        }
    }
}

struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// What a command failed with, and the exit code it maps to (chosen here, at the edge).
struct CommandFailure: Error {
    let message: String
    let exitCode: Int32
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
