import Entitlements

/// What posting a transaction did: the customer's state after the commit, and whether the App
/// Store Server API completed the picture before the answer.
/// - Note: Immutable value; `Sendable`.
public struct PostedTransaction: Sendable, Hashable {
    /// Whether Apple's statuses and history are in `customerInfo`.
    public enum Completion: String, Sendable, Hashable, Codable, CaseIterable {
        /// Apple answered in time: its statuses and history are applied.
        case complete
        /// Apple did not answer in time (an outage, a timeout, a refusal): the verified signed
        /// transaction is stored and grants access now; a `purchase_completion` job asks Apple
        /// again with backoff and applies what it adds.
        case pending
        /// The app has no App Store Connect key: the verified signed transaction stands alone.
        case skipped
    }

    public var customerInfo: CustomerInfo
    public var completion: Completion

    public init(customerInfo: CustomerInfo, completion: Completion) {
        self.customerInfo = customerInfo
        self.completion = completion
    }
}
