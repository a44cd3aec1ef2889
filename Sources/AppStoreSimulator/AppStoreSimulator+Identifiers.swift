extension AppStoreSimulator {
    /// Makes the ids this simulator issues from now on (transaction, original transaction, web
    /// order line item, app transaction and order ids) follow `offset` instead of starting at 1.
    ///
    /// Apple's ids are unique across the whole App Store, and a server keys its facts by them.
    /// Two simulators that start from 1 would hand one server the same ids for different
    /// purchases: end-to-end runs sharing one PostgreSQL database, or a demo restarted on a
    /// kept database. Each gives its simulator a different offset (e.g. from the wall clock).
    /// Sandbox ids keep their 15-digit shape while `offset` stays below 10^14.
    public func startIdentifiers(after offset: Int64) {
        state.startIdentifiers(after: offset)
    }
}
