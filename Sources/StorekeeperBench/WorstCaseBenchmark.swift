import AppStoreModels
import Entitlements
import Foundation
import Storage
import StorekeeperIngestion

/// `BENCH_ONLY=worstcase`: the cost of one more fact for a customer with a long history.
///
/// One customer holds a monthly subscription renewed `periods` times (each period a
/// transaction, a renewal info and a `DID_RENEW` notification: three facts) in a fresh SQLite
/// store; then more renewals arrive one at a time through the real path
/// (`IngestionWriter.commit` of a `FactBatch` with `.existingOwner`, durable commit included)
/// and each latency is kept. The target is the issue's: a customer with 1,000 facts (334
/// periods) taking more; 1,000 periods (3,000 facts) are measured beside it to show how the
/// cost grows. The reference is the same ingestion for customers with a one-period history,
/// measured in the same run, with the pages each of the long customer's commits wrote to the
/// log (`WriteAheadLogCommits`): the commit's cost beyond the disk's flush. A breakdown then
/// times the steps of one re-evaluation of the long customer, each alone on one thread
/// (ingestion runs the state and the analytics side by side on two).
/// - Note: Runs alone; single-threaded apart from the store's own writer thread.
enum WorstCaseBenchmark {
    static let appId = "worstcase"
    static let base: Int64 = 1_600_000_000_000
    static let day: Int64 = 86_400_000
    static let catalog = ProductCatalog(products: [
        CatalogProduct(
            productId: "monthly", kind: .autoRenewable, subscriptionGroup: "premium", groupLevel: 1,
            duration: SubscriptionPeriod(value: 1, unit: .month), entitlementIds: ["pro"],
            referencePrice: Money(milliunits: 9990, currency: "USD"))
    ])

    static func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let ingestions = Int(environment["BENCH_WORSTCASE_INGESTIONS"] ?? "") ?? 50
        if let repetitions = Int(environment["BENCH_WORSTCASE_PURE"] ?? "") {
            pureSteps(periods: Int(environment["BENCH_WORSTCASE_PERIODS"] ?? "") ?? 334, repetitions: repetitions)
            return
        }
        print("\n== Worst case: one more fact for a customer with a long history (SQLite, durable) ==")
        if let periods = Int(environment["BENCH_WORSTCASE_PERIODS"] ?? "") {
            try await run(periods: periods, ingestions: ingestions, target: true)
        } else {
            try await run(periods: 334, ingestions: ingestions, target: true)
            try await run(periods: 1_000, ingestions: ingestions, target: false)
        }
    }

    /// With `target`, the history is the issue's and the ingestion is also timed step by step;
    /// without, it only shows how the cost grows.
    static func run(periods: Int, ingestions: Int, target: Bool) async throws {
        // Each run's store numbers its customers alike: nothing decoded in a run before is kept.
        CustomerEvaluationCache.shared.removeAll()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "storekeeper-worstcase-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try await SQLiteStore.open(path: directory.appendingPathComponent("bench.sqlite").path)
        let start = Timestamp(millisecondsSince1970: base)
        try await store.write { tx in
            try tx.saveApp(
                AppRecord(id: appId, bundleId: "com.example.worstcase", environments: [.production]), at: start)
            try tx.saveCatalog(appId: appId, catalog, at: start)
            try tx.saveWebhookEndpoint(
                WebhookEndpoint(id: "hook", appId: appId, url: "http://127.0.0.1:9/hook", secret: "s"), at: start)
        }
        let writer = IngestionWriter(store: store)

        // The long customer, imported in one write (its history did not need the ingestion path).
        // Ids differ between runs: each run's store is fresh and numbers its customers alike,
        // so equal texts would find the process-wide caches warm from the run before.
        let longOriginal = String(4_000_000_000 + periods)
        let customerId = try await importHistory(
            store: store, appUserId: "long", original: longOriginal, periods: periods)
        print(
            "history: \(periods) periods = \(periods) transactions + \(periods) renewal infos + \(periods) notifications"
                + " = \(3 * periods) facts"
        )

        var long: [Double] = []
        for index in 0..<ingestions {
            let batch = renewal(original: longOriginal, period: periods + index)
            long.append(try await milliseconds { _ = try await writer.commit(batch, operation: "bench") })
        }
        // What those commits handed the disk (read now: the short customers' writes follow).
        let log = try WriteAheadLogCommits(path: directory.appendingPathComponent("bench.sqlite-wal").path)
        let longCommits = min(ingestions, log.frames.count)
        // BENCH_WORSTCASE_COPY=PATH: the store as those commits left it (database and log), for
        // a look at the pages each wrote (the log's frame headers name them; `dbstat` their tables).
        if let keep = ProcessInfo.processInfo.environment["BENCH_WORSTCASE_COPY"] {
            for suffix in ["", "-wal"] {
                try? FileManager.default.copyItem(
                    atPath: directory.appendingPathComponent("bench.sqlite" + suffix).path, toPath: keep + suffix)
            }
        }
        // Reference: customers whose history is one period, the same ingestion.
        var short: [Double] = []
        for index in 0..<ingestions {
            let original = String(5_000_000_000 + periods * 1_000 + index)
            _ = try await importHistory(store: store, appUserId: "short-\(index)", original: original, periods: 1)
            let batch = renewal(original: original, period: 1)
            short.append(try await milliseconds { _ = try await writer.commit(batch, operation: "bench") })
        }
        let verdict = target ? (median(long) < 5 ? "(target < 5 ms: PASS)" : "(target < 5 ms: MISS)") : "(growth)"
        print(
            String(
                format:
                    "period %5d..%-5d ingested one by one  : first %7.2f ms  median %7.2f ms  worst %7.2f ms  ",
                periods + 1, periods + ingestions, long[0], median(long), long.max()!) + verdict)
        print(
            String(
                format:
                    "same ingestion, 1-period history      : first %7.2f ms  median %7.2f ms  worst %7.2f ms  (reference)",
                short[0], median(short), short.max()!))
        // The floor under both: one durable commit of one tiny row on the same disk, now. When
        // the disk's flush is slow, it is most of the target on its own; what the history
        // costs is the difference between the two lines above.
        let rawCommits = try RawCommitReference.sqlite(directory: directory, seconds: 1)
        print(
            String(
                format:
                    "raw durable commit of one row, same disk: %.2f ms (%.0f/s); the long history costs %.2f ms more"
                    + " than the 1-period one",
                1_000 / rawCommits, rawCommits, median(long) - median(short)))

        if let frames = log.medianFrames(ofLast: longCommits) {
            print(
                "log written per durable commit of the long customer: median \(frames) pages of \(log.pageSize) B"
                    + " = \(frames * log.pageSize / 1_024) KiB (last \(longCommits) commits in the log)")
        }

        guard target else {
            await store.close()
            return
        }
        let steps = try await breakdown(
            store: store, customerId: customerId, original: longOriginal, firstPeriod: periods + ingestions,
            repetitions: 20)
        print("the same ingestion step by step, median of 20 more renewals of the long customer:")
        for (name, values) in steps {
            print(
                "  " + name.padding(toLength: 42, withPad: " ", startingAt: 0)
                    + String(format: ": %8.2f ms", median(values)))
        }
        // What each of those commits rewrites whatever the new fact: the stored state lists a
        // revenue entry per transaction and every event id.
        let stored = try await store.read { reader in
            try reader.customerInfoJSON(customerId: customerId, environment: .production)
        }
        let info = try await store.read { reader in
            try reader.customerInfo(customerId: customerId, environment: .production)
        }
        print(
            "stored CustomerInfo of the long customer: \(stored?.json.utf8.count ?? 0) bytes"
                + " (\(info?.info.revenue.count ?? 0) revenue entries, \(info?.info.eventIds.count ?? 0) event ids)")
        await store.close()
    }

    /// `BENCH_WORSTCASE_PURE=N`: the two pure steps of a re-evaluation (the engine, the analytics
    /// figures) on the long customer's facts, repeated `N` times without a store, so a profile
    /// (`perf record`) sees them alone.
    static func pureSteps(periods: Int, repetitions: Int) {
        let original = String(4_000_000_000 + periods)
        var facts: [Fact] = []
        for period in 0..<periods {
            let batch = renewal(original: original, period: period)
            facts += batch.transactions.map { .transaction($0.fact) } + batch.renewals.map { .renewalInfo($0.fact) }
            if let notification = batch.notification?.fact { facts.append(.notification(notification)) }
        }
        let now = Timestamp(millisecondsSince1970: base + Int64(periods) * 30 * day + 120_000)
        // What an ingestion passes: the state saved after the period before.
        let previous = PreviousEvaluation(
            EntitlementEngine.evaluate(
                customerId: "long", environment: .production, facts: Array(facts.dropLast(3)), catalog: catalog,
                now: now.adding(milliseconds: -30 * day)
            ).customerInfo)
        var engine: [Double] = []
        var analytics: [Double] = []
        var checksum = 0
        for _ in 0..<repetitions {
            engine.append(
                milliseconds {
                    checksum &+=
                        EntitlementEngine.evaluate(
                            customerId: "long", environment: .production, facts: facts, catalog: catalog, now: now,
                            previousEvaluation: previous
                        ).allEvents.count
                })
            analytics.append(
                milliseconds {
                    checksum &+=
                        AnalyticsContribution.all(
                            facts: facts, environment: .production, catalog: catalog, rule: CommissionRule(), now: now
                        ).daily.count
                })
        }
        print(
            String(
                format:
                    "%d facts, median of %d: EntitlementEngine.evaluate %.3f ms, AnalyticsContribution.all %.3f ms (%d)",
                facts.count, repetitions, median(engine), median(analytics), checksum))
    }

    /// Imports `periods` monthly periods for a new customer, evaluates and saves its state.
    static func importHistory(store: any Store, appUserId: String, original: String, periods: Int) async throws
        -> Int64
    {
        try await store.write { tx in
            let now = Timestamp(millisecondsSince1970: base + Int64(periods) * 30 * day - 60_000)
            let record = try tx.ensureCustomer(appId: appId, appUserId: appUserId, at: now)
            try tx.claimOriginalTransaction(original, customerId: record.id, at: now)
            for period in 0..<periods {
                let batch = renewal(original: original, period: period)
                if let notification = batch.notification { _ = try tx.insertNotification(notification) }
                for fact in batch.transactions { _ = try tx.insertTransaction(fact) }
                for fact in batch.renewals { _ = try tx.insertRenewalInfo(fact) }
            }
            let evaluation = EntitlementEngine.evaluate(
                customerId: appUserId, environment: .production, facts: try tx.facts(customerId: record.id),
                catalog: catalog, now: now)
            _ = try tx.saveCustomerInfo(evaluation.customerInfo, customerId: record.id, expectedVersion: nil, at: now)
            _ = try tx.appendEvents(evaluation.newEvents, customerId: record.id, at: now)
            return record.id
        }
    }

    /// Period `period` of `original` as App Store facts: the `DID_RENEW` (or `SUBSCRIBED`)
    /// notification with its signed transaction and renewal info, received a minute after.
    static func renewal(original: String, period: Int) -> FactBatch {
        let purchase = Timestamp(millisecondsSince1970: base + Int64(period) * 30 * day)
        let received = purchase.adding(milliseconds: 60_000)
        let transactionId = period == 0 ? original : "\(original)\(String(format: "%05d", period))"
        let transaction = TransactionFact(
            transactionId: transactionId, originalTransactionId: original, productId: "monthly",
            subscriptionGroup: "premium", purchaseDate: purchase,
            originalPurchaseDate: Timestamp(millisecondsSince1970: base),
            expiresDate: purchase.adding(milliseconds: 30 * day), signedDate: purchase, environment: .production,
            price: 9990, currency: "USD", transactionReason: period == 0 ? .purchase : .renewal)
        let renewalInfo = RenewalFact(
            originalTransactionId: original, productId: "monthly", autoRenewProductId: "monthly",
            autoRenewEnabled: true, signedDate: purchase, environment: .production)
        let uuid = "\(original)-n\(period)"
        let type = period == 0 ? NotificationTypeV2.subscribed.rawValue : NotificationTypeV2.didRenew.rawValue
        let subtype = period == 0 ? Subtype.initialBuy.rawValue : nil
        let notification = NewNotification(
            appId: appId, notificationUUID: uuid, type: type, subtype: subtype, environment: .production,
            originalTransactionId: original, signedDate: purchase,
            signedPayload: SignedPayloadFiller.text("bench.\(uuid)", length: SignedPayloadFiller.notificationLength),
            fact: NotificationFact(
                notificationId: uuid, type: type, subtype: subtype, signedDate: purchase, environment: .production,
                originalTransactionId: original, transactionId: transactionId, productId: "monthly"),
            receivedAt: received)
        var batch = FactBatch(
            appId: appId, receivedAt: received, environment: .production, ownership: .existingOwner,
            notification: notification)
        batch.transactions = [
            NewTransaction(
                appId: appId,
                jws: SignedPayloadFiller.text(
                    "bench.\(transactionId)", length: SignedPayloadFiller.transactionLength), fact: transaction,
                source: "notification", receivedAt: received)
        ]
        batch.renewals = [
            NewRenewalInfo(
                appId: appId,
                jws: SignedPayloadFiller.text(
                    "bench.\(uuid).renewal", length: SignedPayloadFiller.renewalInfoLength), fact: renewalInfo,
                source: "notification", receivedAt: received)
        ]
        return batch
    }

    /// The steps `CustomerStateUpdater.update` takes, timed one by one over `repetitions`
    /// real ingestions: each repetition stores the next renewal's facts, then re-evaluates the
    /// customer step by step (so every step sees a real change, as an ingestion does), each in
    /// a write of its own that commits (the daily rows are written at the commit, timed with
    /// it). The uncached reads (what every ingestion did before the cache) and the plain
    /// encoding are timed beside them.
    static func breakdown(store: any Store, customerId: Int64, original: String, firstPeriod: Int, repetitions: Int)
        async throws -> [(String, [Double])]
    {
        let cache = CustomerEvaluationCache.shared
        var steps: [(String, [Double])] = [
            ("load + decode all facts (uncached)", []), ("previous CustomerInfo decoded (uncached)", []),
            ("encode CustomerInfo (AppStoreJSON, plain)", []),
            ("facts through the cache", []), ("catalog + previous through the cache", []),
            ("EntitlementEngine.evaluate", []), ("encode CustomerInfo (reusing parts)", []),
            ("save CustomerInfo + append events", []), ("revise standing events", []),
            ("analytics: settings + figures and cohorts", []), ("analytics: daily contribution applied", []),
            ("analytics: periods applied", []), ("analytics: cohorts applied", []),
            ("event texts (on the state's thread)", []), ("commit (daily rows written, fsync)", []),
        ]
        let stepCount = steps.count
        for repetition in 0..<repetitions {
            let batch = renewal(original: original, period: firstPeriod + repetition)
            let start = DispatchTime.now().uptimeNanoseconds
            let (times, beforeCommit) = try await store.write { tx -> ([Double], Double) in
                var times = [Double](repeating: 0, count: stepCount - 1)
                if let notification = batch.notification { _ = try tx.insertNotification(notification) }
                for fact in batch.transactions { _ = try tx.insertTransaction(fact) }
                for fact in batch.renewals { _ = try tx.insertRenewalInfo(fact) }
                guard let customer = try tx.customer(id: customerId) else { return (times, 0) }
                let now = batch.receivedAt
                times[0] = (try milliseconds { _ = try tx.facts(customerId: customerId) })
                times[1] =
                    (try milliseconds { _ = try tx.customerInfo(customerId: customerId, environment: .production) })
                var facts: [Fact] = []
                times[3] = (try milliseconds { facts = try cache.facts(customerId: customerId, in: tx) })
                var stored: (previous: PreviousEvaluation, version: Int64)?
                var catalog = ProductCatalog(products: [])
                times[4] =
                    (try milliseconds {
                        catalog = try tx.catalog(appId: appId) ?? catalog
                        stored = try cache.previousEvaluation(
                            customerId: customerId, environment: .production, in: tx)
                    })
                var evaluation: EntitlementEvaluation?
                times[5] =
                    (milliseconds {
                        evaluation = EntitlementEngine.evaluate(
                            customerId: customer.appUserId, environment: .production, facts: facts, catalog: catalog,
                            now: now, previousEvaluation: stored?.previous)
                    })
                var encoding: CustomerInfoEncoding?
                times[6] =
                    (milliseconds {
                        encoding = CustomerInfoEncoding(
                            evaluation!.customerInfo,
                            reusing: cache.encoding(customerId: customerId, environment: .production))
                    })
                var canonical = Data()
                times[2] = (milliseconds { canonical = AppStoreJSON.encode(evaluation!.customerInfo) })
                precondition(
                    Data(encoding!.json.utf8) == canonical, "CustomerInfoEncoding differs from AppStoreJSON.encode")
                var appended: [StoredEvent] = []
                times[7] =
                    (try milliseconds {
                        _ = try tx.saveCustomerInfo(
                            evaluation!.customerInfo, json: encoding!.json,
                            digest: CustomerInfoDigest.of(encoding!.json.utf8), customerId: customerId,
                            expectedVersion: stored?.version, at: now)
                        appended = try tx.appendEvents(evaluation!.newEvents, customerId: customerId, at: now)
                    })
                cache.remember(evaluation!.customerInfo, encoding: encoding!, customerId: customerId)
                let fresh = Set(appended.map(\.event.id))
                let standing = evaluation!.allEvents.filter { !fresh.contains($0.id) }
                var texts: [String] = []
                times[13] = (milliseconds { texts = StoredEventText.of(standing, customerId: customerId) })
                times[8] =
                    (try milliseconds { _ = try tx.reviseEvents(standing, texts: texts, customerId: customerId) })
                var figures: AnalyticsFigures?
                times[9] =
                    (try milliseconds {
                        let rule = try tx.analyticsSettings(appId: appId)?.settings.commissionRule ?? CommissionRule()
                        figures = AnalyticsContribution.all(
                            facts: facts, environment: .production, catalog: catalog, rule: rule, now: now)
                    })
                times[10] =
                    (try milliseconds {
                        _ = try tx.applyAnalyticsContribution(
                            customerId: customerId, appId: appId, environment: .production, figures!.daily)
                    })
                times[11] =
                    (try milliseconds {
                        _ = try tx.applyAnalyticsPeriods(
                            customerId: customerId, appId: appId, environment: .production, figures!.periods)
                    })
                times[12] =
                    (try milliseconds {
                        _ = try tx.applyAnalyticsCohorts(
                            customerId: customerId, appId: appId, environment: .production, figures!.cohorts)
                    })
                return (times, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
            }
            for (index, time) in times.enumerated() { steps[index].1.append(time) }
            steps[steps.count - 1].1.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6 - beforeCommit)
        }
        return steps
    }

    static func milliseconds(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
    }

    static func milliseconds(_ body: () async throws -> Void) async rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try await body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }
}
