/// Whether the customer bought the item or has it through Family Sharing.
///
/// Wire values exactly as Apple documents them; unknown values survive through `RawEnum`.
public enum InAppOwnershipType: String, Sendable, Hashable, Codable, CaseIterable {
    case familyShared = "FAMILY_SHARED"
    case purchased = "PURCHASED"
    /// Assigned to the customer by an organization or group (App Store Server API 1.22).
    case assigned = "ASSIGNED"
}
