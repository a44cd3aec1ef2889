/// What a receipt backfill run did, line by line: the counts its summary prints.
/// - Note: A value; `Sendable`.
public struct BackfillSummary: Sendable, Hashable, Codable {
    /// Lines whose facts this run committed.
    public var imported = 0
    /// Lines imported before (an earlier run, or the same line earlier in the file).
    public var duplicates = 0
    /// Refused lines by rule (`line.noTab`, `receipt.signatureInvalid`, …).
    public var refused: [String: Int] = [:]
    /// Failed lines by error code (`app_store_unavailable`, `rate_limited`, …).
    public var failed: [String: Int] = [:]

    public init() {}

    /// Lines handled.
    public var lines: Int { imported + duplicates + refused.values.reduce(0, +) + failed.values.reduce(0, +) }
    /// Lines written to the failed-lines file.
    public var unsuccessful: Int { refused.values.reduce(0, +) + failed.values.reduce(0, +) }

    public mutating func count(_ outcome: ReceiptBackfill.Outcome) {
        switch outcome {
        case .imported: imported += 1
        case .duplicate: duplicates += 1
        case .refused(let rule, _): refused[rule, default: 0] += 1
        case .failed(let code, _): failed[code, default: 0] += 1
        }
    }

    /// The summary as printed at the end of a run: one count per line, rules and codes sorted.
    public var text: String {
        var lines = ["imported: \(imported)", "duplicates: \(duplicates)"]
        lines.append("refused: \(refused.values.reduce(0, +))")
        for rule in refused.keys.sorted() { lines.append("  \(rule): \(refused[rule]!)") }
        lines.append("failed: \(failed.values.reduce(0, +))")
        for code in failed.keys.sorted() { lines.append("  \(code): \(failed[code]!)") }
        return lines.joined(separator: "\n")
    }
}
