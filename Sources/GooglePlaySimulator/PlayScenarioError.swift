/// Why a `play_store` scenario step cannot be read or run: a message naming the step and what
/// is wrong (`step 2: play_store action renew needs a customer`).
/// - Note: Immutable value; `Sendable`.
public struct PlayScenarioError: Error, CustomStringConvertible, Equatable, Sendable {
    public var description: String

    public init(_ description: String) { self.description = description }
}
