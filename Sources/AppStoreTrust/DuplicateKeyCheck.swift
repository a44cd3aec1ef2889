import Foundation

/// Refuses JSON whose objects repeat a key, or that nests deeper than a bound.
///
/// Why: Foundation's `JSONDecoder` keeps the first of two equal keys and `JSONSerialization`
/// the last, so a signed payload with `{"bundleId":"a","bundleId":"b"}` could mean different
/// things to two readers. Signed input must have one meaning. This pass only walks the
/// structure to find keys; full JSON validation stays with Foundation's parser.
enum DuplicateKeyCheck {
    enum Outcome: Equatable {
        case unique
        case duplicate(String)
        case malformed
        case tooDeep
    }

    static let maximumDepth = 64

    static func check(_ bytes: [UInt8]) -> Outcome { scan(bytes).outcome }

    /// `check`, and the keys of the top-level object (empty unless `unique`): what tells one
    /// signed payload type from another (`PayloadTypeRule`), found on the same pass.
    static func scan(_ bytes: [UInt8]) -> (outcome: Outcome, topLevelKeys: Set<String>) {
        var scanner = Scanner(bytes: bytes)
        do {
            scanner.skipWhitespace()
            try scanner.value(depth: 0)
            scanner.skipWhitespace()
            return scanner.index == bytes.count ? (.unique, scanner.topLevelKeys) : (.malformed, [])
        } catch let outcome {
            return (outcome.outcome, [])
        }
    }

    private struct Stop: Error { let outcome: Outcome }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0
        var topLevelKeys = Set<String>()

        mutating func skipWhitespace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func value(depth: Int) throws(Stop) {
            guard depth < DuplicateKeyCheck.maximumDepth else { throw Stop(outcome: .tooDeep) }
            guard index < bytes.count else { throw Stop(outcome: .malformed) }
            switch bytes[index] {
            case UInt8(ascii: "{"): try object(depth: depth)
            case UInt8(ascii: "["): try array(depth: depth)
            case UInt8(ascii: "\""): _ = try string()
            default:
                // Numbers and literals: skip to the next structural character.
                let start = index
                while index < bytes.count, !",]} \t\r\n".utf8.contains(bytes[index]) { index += 1 }
                if index == start { throw Stop(outcome: .malformed) }
            }
        }

        mutating func object(depth: Int) throws(Stop) {
            index += 1
            var keys = Set<String>()
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Stop(outcome: .malformed) }
                let key = try string()
                guard keys.insert(key).inserted else { throw Stop(outcome: .duplicate(key)) }
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw Stop(outcome: .malformed) }
                index += 1
                skipWhitespace()
                try value(depth: depth + 1)
                skipWhitespace()
                guard index < bytes.count else { throw Stop(outcome: .malformed) }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    if depth == 0 { topLevelKeys = keys }
                    return
                }
                throw Stop(outcome: .malformed)
            }
        }

        mutating func array(depth: Int) throws(Stop) {
            index += 1
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return }
            while true {
                skipWhitespace()
                try value(depth: depth + 1)
                skipWhitespace()
                guard index < bytes.count else { throw Stop(outcome: .malformed) }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return }
                throw Stop(outcome: .malformed)
            }
        }

        /// Returns the string's value; escapes are resolved by Foundation so that `"a"` and
        /// `"\u0061"` count as the same key.
        mutating func string() throws(Stop) -> String {
            let start = index
            index += 1
            var escaped = false
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\\") {
                    escaped = true
                    index += 2
                    continue
                }
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    let literal = Array(bytes[start..<index])
                    if !escaped { return String(decoding: literal.dropFirst().dropLast(), as: UTF8.self) }
                    guard let decoded = try? JSONDecoder().decode(String.self, from: Data(literal)) else {
                        throw Stop(outcome: .malformed)
                    }
                    return decoded
                }
                index += 1
            }
            throw Stop(outcome: .malformed)
        }
    }
}
