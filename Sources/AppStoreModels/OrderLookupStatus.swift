/// Whether an order ID from a customer's App Store receipt email is valid (Look Up Order ID).
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum OrderLookupStatus: Int32, Sendable, Hashable, Codable, CaseIterable {
    case valid = 0
    case invalid = 1
}
