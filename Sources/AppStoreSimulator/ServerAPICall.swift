/// One authenticated Server API call the simulator answered: the route (method and Apple's
/// path pattern) and the transaction id it named, if any. Tests count them: a job done once is
/// one call.
/// - Note: Immutable value; `Sendable`.
public struct ServerAPICall: Sendable, Hashable, CustomStringConvertible {
    /// `PUT /inApps/v2/transactions/consumption/{transactionId}`.
    public var route: String
    public var transactionId: String?

    public init(route: String, transactionId: String? = nil) {
        self.route = route
        self.transactionId = transactionId
    }

    public var description: String { transactionId.map { "\(route) \($0)" } ?? route }
}

extension AppStoreSimulator {
    /// How many times each Server API call was made (authenticated ones only), since the start.
    public func serverAPICalls() -> [ServerAPICall: Int] { serverAPICallCounts }

    func record(_ call: ServerAPICall) { serverAPICallCounts[call, default: 0] += 1 }
}
