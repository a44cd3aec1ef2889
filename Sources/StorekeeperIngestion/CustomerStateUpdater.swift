import AppStoreModels
import Entitlements
import Storage

/// The step every ingestion ends with, inside its `store.write` closure: load all facts of a
/// customer (decoded through `CustomerEvaluationCache`), run the engine with the previously stored `CustomerInfo`, save the new state
/// (compare-and-set on its version), append the new lifecycle events, retract those the facts no
/// longer imply (each with an `EVENT_RETRACTED`), revise those whose content a later fact changed,
/// and queue webhook deliveries of the new ones: all in the
/// caller's transaction, so they commit (or not) with the facts. The customer's standing events
/// are then exactly those its facts imply, whatever order the facts arrived in.
/// - Note: Stateless; runs on the store's thread inside a write body, where only the store's
///   thread touches the transaction (a long history's engine run goes to one of the `BackgroundThreads`).
///   The analytics rows are written before the state: the order within the transaction does
///   not matter (shared rows are written at the commit, the customer's under its lock).
public enum CustomerStateUpdater {
    /// The result of re-evaluating one customer in one environment.
    struct Outcome: Sendable {
        var info: CustomerInfo
        var version: Int64
        var newEvents: [StoredEvent]
    }

    /// Re-evaluates the customers a purchase is shared with (the `share` transfer policy),
    /// after its owner: a fact about the purchase changes their state too.
    static func updateSharers(
        appId: String, originalTransactionId: String, environment: AppStoreEnvironment,
        in transaction: any StoreTransaction, now: Timestamp
    ) throws {
        for id in try transaction.customersSharing(appId: appId, originalTransactionId: originalTransactionId) {
            let sharer = try transaction.lockCustomer(id: id)
            try update(customer: sharer, environment: environment, in: transaction, now: now)
        }
    }

    /// The number of facts from which a customer's state and analytics are worked out on two
    /// threads: below it the hand-off costs more than it saves (a short history evaluates in
    /// tens of microseconds). `update` takes another only from tests (both paths compared).
    static let parallelFactCount = 200

    /// The fewest standing events for which their stored texts are remembered with the state
    /// (`CustomerEvaluationCache`), so that the next evaluation need not read them back: a short
    /// history's few rows cost less to read than to remember. `update` takes another only from
    /// tests.
    static let rememberedEventCount = 64

    /// `events`' texts by id, to be remembered; nil where two events share an id (the rows hold
    /// one text per id: which one stands is the store's to say).
    static func textsById(_ events: [LifecycleEvent], _ texts: [String]) -> [String: String]? {
        var byId: [String: String] = [:]
        byId.reserveCapacity(events.count)
        for (event, text) in zip(events, texts) where byId.updateValue(text, forKey: event.id) != nil {
            return nil
        }
        return byId
    }

    /// Re-evaluates `customer` in `environment` at `now`. The customer's lock must be held.
    /// Facts and the previous state are read as stored text and decoded only where `cache`
    /// has not decoded those exact bytes before, so a long history costs little to re-read.
    @discardableResult
    static func update(
        customer: CustomerRecord, environment: AppStoreEnvironment, in transaction: any StoreTransaction,
        now: Timestamp, cache: CustomerEvaluationCache = .shared, parallelFactCount: Int = parallelFactCount,
        rememberedEventCount: Int = rememberedEventCount
    ) throws -> Outcome {
        let facts = try cache.facts(customerId: customer.id, in: transaction)
        let catalog = try transaction.catalog(appId: customer.appId) ?? ProductCatalog(products: [])
        let previous = try cache.previousState(customerId: customer.id, environment: environment, in: transaction)
        let playCommission = try playCommission(facts: facts, appId: customer.appId, in: transaction)
        let settings = try transaction.analyticsSettings(appId: customer.appId)?.settings ?? AnalyticsSettings()
        // The state and the analytics are worked out from the same facts independently, and for
        // a long history each takes milliseconds: the state on a second core while this thread
        // works out and stores the analytics.
        let ((evaluation, encoding, digest, eventTexts, textsById), ()) = try ConcurrentPair.run(
            inParallel: facts.count >= parallelFactCount,
            background: {
                let evaluation = EntitlementEngine.evaluate(
                    customerId: customer.appUserId, environment: environment, facts: facts, catalog: catalog,
                    now: now, previousEvaluation: previous?.previous, playCommission: playCommission)
                let encoding = CustomerInfoEncoding(
                    evaluation.customerInfo,
                    reusing: cache.encoding(customerId: customer.id, environment: environment))
                // Hashed here, on the shorter of the two halves: 0.1 ms for a long history's
                // 165 KB, which every GET of it hashed before. The events' stored texts too, for
                // their revision below (0.4 ms of a long history's on the store's thread).
                let texts = StoredEventText.of(evaluation.allEvents, customerId: customer.id)
                return (
                    evaluation, encoding, CustomerInfoDigest.of(encoding.json.utf8), texts,
                    evaluation.allEvents.count >= rememberedEventCount
                        ? Self.textsById(evaluation.allEvents, texts) : nil
                )
            },
            here: {
                let figures = AnalyticsContribution.all(
                    facts: facts, environment: environment, catalog: catalog, rule: settings.commissionRule, now: now)
                try AnalyticsAggregation.apply(figures, customer: customer, environment: environment, in: transaction)
            })
        let version = try transaction.saveCustomerInfo(
            evaluation.customerInfo, json: encoding.json, digest: digest, customerId: customer.id,
            expectedVersion: previous?.version, at: now)
        // Remembered before the commit: if this transaction rolls back, the stored text differs
        // from `encoding.json` and the next evaluation decodes what is really there.
        cache.remember(
            evaluation.customerInfo, encoding: encoding, customerId: customer.id, eventTexts: textsById,
            version: version)
        var appended: [StoredEvent] = []
        if !evaluation.retractedEventIds.isEmpty {
            // Kept (it may have been delivered) and marked; its correction is reported first.
            let retracted = try transaction.retractEvents(
                ids: evaluation.retractedEventIds, customerId: customer.id, at: now)
            appended += try transaction.appendEvents(
                retracted.map { LifecycleEvent.retraction(of: $0.event, at: now) }, customerId: customer.id, at: now)
        }
        appended += try transaction.appendEvents(evaluation.newEvents, customerId: customer.id, at: now)
        // Events reported before whose content a later fact changed (an instant, a reason, money)
        // are rewritten, so the stored events are what the facts imply whatever the arrival order.
        let fresh = Set(appended.map(\.event.id))
        var standing: [LifecycleEvent] = []
        var standingTexts: [String] = []
        standing.reserveCapacity(evaluation.allEvents.count)
        standingTexts.reserveCapacity(evaluation.allEvents.count)
        for (event, text) in zip(evaluation.allEvents, eventTexts) where !fresh.contains(event.id) {
            standing.append(event)
            standingTexts.append(text)
        }
        if let known = previous?.eventTexts {
            // The stored texts are known (the previous state is the one remembered with them):
            // only the events whose text differs from them are written, and none is read.
            var changed: [LifecycleEvent] = []
            var changedTexts: [String] = []
            for (event, text) in zip(standing, standingTexts) {
                if let stored = known[event.id], StoredText.sameBytes(stored, text) { continue }
                changed.append(event)
                changedTexts.append(text)
            }
            try transaction.rewriteEvents(changed, texts: changedTexts, customerId: customer.id)
        } else {
            try transaction.reviseEvents(standing, texts: standingTexts, customerId: customer.id)
        }
        if !appended.isEmpty {
            try transaction.enqueueDeliveries(of: appended, appId: customer.appId, at: now)
        }
        return Outcome(info: evaluation.customerInfo, version: version, newEvents: appended)
    }

    /// The customer's state at `now` without saving it (a read): the stored state when nothing
    /// can have changed with time since it was evaluated, otherwise a fresh evaluation.
    public static func current(
        customer: CustomerRecord?, appUserId: String, environment: AppStoreEnvironment, in reader: any StoreReader,
        now: Timestamp
    ) throws -> CustomerInfo {
        guard let customer else {
            return CustomerInfo(customerId: appUserId, environment: environment, evaluatedAt: now)
        }
        let stored = try reader.customerInfo(customerId: customer.id, environment: environment)
        if let stored, !stored.info.mayHaveChanged(by: now) { return stored.info }
        let facts = try reader.facts(customerId: customer.id)
        let catalog = try reader.catalog(appId: customer.appId) ?? ProductCatalog(products: [])
        return EntitlementEngine.evaluate(
            customerId: customer.appUserId, environment: environment, facts: facts, catalog: catalog, now: now,
            previous: stored?.info, playCommission: try playCommission(facts: facts, appId: customer.appId, in: reader)
        ).customerInfo
    }

    /// Google's service fee on the customer's Play purchases, from the app's analytics settings
    /// (the rule analytics applies, so a purchase's revenue says what the figures count); read
    /// only for a customer with Play facts, so App Store customers cost no extra query.
    static func playCommission(facts: [Fact], appId: String, in reader: any StoreReader) throws
        -> PlayCommissionRule
    {
        guard facts.contains(where: { $0.store == .playStore }) else { return PlayCommissionRule() }
        return try reader.analyticsSettings(appId: appId)?.settings.googlePlay ?? PlayCommissionRule()
    }
}
