import Foundation

/// The server's operational log: one JSON object a line on standard error, a constant event
/// name in `event` and the data in other keys (never a secret, a token or a payload).
/// - Note: Thread-safe: each line is one `write` of a whole line.
public enum ServerLog {
    public static func event(_ fields: [String: String]) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let line = (try? encoder.encode(fields)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
