/// The outcome of a retention-messaging performance test.
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum PerformanceTestStatus: String, Sendable, Hashable, Codable, CaseIterable {
    case pending = "PENDING"
    case pass = "PASS"
    case fail = "FAIL"
}
