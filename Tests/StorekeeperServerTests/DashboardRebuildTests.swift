import AppStoreModels
import Foundation
import HTTPServer
import Storage
import StorekeeperTesting
import Testing

@testable import StorekeeperServer

/// Issue 13: the analytics rebuild a change of the commission terms queues is shown on the
/// dashboard. The overview and cohorts pages say while the app's latest rebuild is queued or
/// running (progress, start) that their figures are being recomputed, say when it failed and
/// why, and say quietly when it completed; the operations page lists the recent rebuilds. Each
/// state is made with the job queue's own calls (claim, progress, retry, give up) and then by
/// the application's rebuild worker, and the pages' text is asserted exactly.
@Suite(.serialized) struct DashboardRebuildTests {
    static let minute: Int64 = 60_000
    /// 2026-01-10 09:00 UTC.
    static let requested = UnaggregatedCustomers.december.adding(
        milliseconds: 40 * UnaggregatedCustomers.day + 540 * minute)
    static let owner = "dashboard-test-instance"

    /// The pages of one signed-in app.
    private final class Pages {
        var client: DashboardClient
        let appId: String
        var base: String { "/dashboard/apps/\(appId)" }

        init(client: DashboardClient, appId: String) {
            self.client = client
            self.appId = appId
        }

        func overview() async -> String {
            let page = await client.send(.get, base + "?period=7&environment=Sandbox")
            #expect(page.status.code == 200)
            return page.text
        }

        func cohorts() async -> String {
            let page = await client.send(.get, base + "/cohorts")
            #expect(page.status.code == 200)
            return page.text
        }

        /// The operations page's rebuild table.
        func rebuilds() async -> String {
            let page = await client.send(.get, base + "/operations")
            #expect(page.status.code == 200)
            let text = page.text
            guard let start = text.range(of: #"<table id="analytics-rebuilds">"#),
                let end = text.range(of: "</table>", range: start.upperBound..<text.endIndex)
            else { return "" }
            return String(text[start.lowerBound..<end.upperBound])
        }
    }

    static let tableHead = """
        <table id="analytics-rebuilds"><thead><tr><th scope="col" class="number">Rebuild</th>\
        <th scope="col">State</th><th scope="col">Reason</th><th scope="col">Progress</th>\
        <th scope="col">Requested</th><th scope="col">Started</th><th scope="col">Finished</th>\
        <th scope="col" class="number">Attempts</th><th scope="col">Outcome</th></tr></thead><tbody>
        """

    /// The operations page's rebuild table with `rows`.
    static func table(_ rows: String...) -> String { tableHead + rows.joined() + "</tbody></table>" }

    /// One row of that table as written: `times` are requested, started and finished.
    static func row(
        _ id: Int, _ state: String, version: Int, progress: String, times: [String], attempts: Int, outcome: String
    ) -> String {
        """
        <tr data-rebuild-id="\(id)"><td class="number">\(id)</td><td>\(state)</td>\
        <td>commission terms changed (settings version \(version))</td><td>\(progress)</td>\
        <td>\(times[0])</td><td>\(times[1])</td><td>\(times[2])</td><td class="number">\(attempts)</td>\
        <td>\(outcome)</td></tr>
        """
    }

    @Test(
        "overview, cohorts and operations show the latest analytics rebuild: queued, running, failed, completed",
        arguments: DashboardTests.databases)
    func rebuildStates(database: TestDatabase) async throws {
        let harness = try await ServerHarness(database: database)
        defer { Task { await harness.stop() } }
        harness.clock.set(Self.requested)
        let app = try await harness.createApp()
        let appId = app.appId
        try await UnaggregatedCustomers.store(5, appId: appId, idPrefix: "60", in: harness.store)
        var client = DashboardClient(harness.application.responder)
        #expect(await client.signIn(app.secretKey).status.code == 303)
        let pages = Pages(client: client, appId: appId)

        // Never rebuilt: no note, an empty list.
        #expect(!(await pages.overview()).contains("analytics-rebuild"))
        #expect(
            await pages.rebuilds()
                == Self.table(#"<tr><td colspan="9" class="muted">None.</td></tr>"#))

        // Queued by a change of the terms.
        let put = try await harness.request(
            "PUT", "/v1/apps/\(appId)/analytics-settings", key: ServerHarness.adminKey,
            json: ["commissionRates": ["default": ["standard": 2000, "reduced": 1000]]])
        #expect(put.status == 202, "\(put.text)")
        let first = try #require((put.json["rebuild"] as? [String: Any])?["id"] as? Int)
        let queued = """
            <div class="notice" role="status" id="analytics-rebuild" data-rebuild-id="\(first)" data-status="queued" \
            data-customers-done="0" data-customers-total="0"><p><strong>Analytics rebuild queued.</strong> \
            The commission terms changed (settings version 1) at 2026-01-10 09:00 UTC; rebuild \(first) has not \
            started yet. The figures shown are being recomputed and may change until it finishes. \
            <a href="/dashboard/apps/\(appId)?period=7&amp;environment=Sandbox">Refresh</a></p></div>
            """
        #expect(await pages.overview().contains("<h1>Overview</h1>" + queued))
        #expect(
            await pages.rebuilds()
                == Self.table(
                    Self.row(
                        first, "queued", version: 1, progress: "0 of 0 customers",
                        times: ["2026-01-10 09:00 UTC", "—", "—"], attempts: 0, outcome: "—")))

        // Running: claimed at 09:01, two of the five customers done; the run then stopped on a
        // store error and waits for its retry.
        let started = Self.requested.adding(milliseconds: Self.minute)
        harness.clock.set(started)
        let jobId = try await harness.store.write { transaction -> Int64? in
            let claimed = try transaction.claimJobs(
                kind: AnalyticsRebuildRecord.jobKind, owner: Self.owner, now: started, leaseMilliseconds: 60_000,
                limit: 1)
            guard let job = claimed.first,
                try transaction.startAnalyticsRebuildRun(id: Int64(first), at: started) != nil
            else { return nil }
            let customers = try transaction.customerIds(appId: appId, after: 0, limit: 2)
            try transaction.advanceAnalyticsRebuild(
                id: Int64(first), afterCustomerId: customers[1], customers: 2, changed: 2)
            return job.id
        }
        let job = try #require(jobId)
        let running = """
            <div class="notice" role="status" id="analytics-rebuild" data-rebuild-id="\(first)" \
            data-status="running" data-customers-done="2" data-customers-total="5"><p><strong>Analytics rebuild \
            running: 2 of 5 customers (40%).</strong> Rebuild \(first) started at 2026-01-10 09:01 UTC after a \
            change of the commission terms (settings version 1). The figures shown are being recomputed and may \
            change until it finishes. <a href="/dashboard/apps/\(appId)?period=7&amp;environment=Sandbox">Refresh\
            </a></p></div>
            """
        #expect(await pages.overview().contains("<h1>Overview</h1>" + running))
        // The cohorts page's refresh link is its own.
        #expect(
            await pages.cohorts().contains(
                "<h1>Cohorts</h1>"
                    + running.replacingOccurrences(
                        of: "/dashboard/apps/\(appId)?period=7&amp;environment=Sandbox",
                        with: "/dashboard/apps/\(appId)/cohorts")))
        let apiRunning = try await harness.request(
            "GET", "/v1/apps/\(appId)/analytics-rebuilds/latest", key: ServerHarness.adminKey)
        #expect(apiRunning.json["status"] as? String == "running")
        #expect(apiRunning.json["customersDone"] as? Int == 2)
        #expect(apiRunning.json["customersTotal"] as? Int == 5)
        let retried = try await harness.store.write { transaction in
            try transaction.failJob(
                id: job, owner: Self.owner, error: "store: busy", retryAt: started.adding(milliseconds: Self.minute),
                at: started)
        }
        #expect(retried)
        #expect(
            await pages.rebuilds()
                == Self.table(
                    Self.row(
                        first, "running", version: 1, progress: "2 of 5 customers (40%)",
                        times: ["2026-01-10 09:00 UTC", "2026-01-10 09:01 UTC", "—"], attempts: 1,
                        outcome: "retrying after: store: busy")))

        // Failed: the second run is given up on at 09:03.
        let gaveUp = started.adding(milliseconds: 2 * Self.minute)
        harness.clock.set(gaveUp)
        let failed = try await harness.store.write { transaction -> Bool in
            guard
                try transaction.claimJobs(
                    kind: AnalyticsRebuildRecord.jobKind, owner: Self.owner, now: gaveUp, leaseMilliseconds: 60_000,
                    limit: 1
                ).first?.id == job
            else { return false }
            return try transaction.failJob(
                id: job, owner: Self.owner, error: "store: database", retryAt: nil, at: gaveUp)
        }
        #expect(failed)
        let failure = """
            <div class="notice error" role="alert" id="analytics-rebuild" data-rebuild-id="\(first)" \
            data-status="failed" data-customers-done="2" data-customers-total="5"><p><strong>Analytics rebuild \
            failed: store: database.</strong> Rebuild \(first) stopped after 2 of 5 customers (40%); it started at \
            2026-01-10 09:01 UTC. The figures shown are only partly recomputed for the new commission terms: run \
            <code>storekeeper analytics rebuild --app \(appId)</code> or change the terms again to recompute \
            them.</p></div>
            """
        #expect(await pages.overview().contains("<h1>Overview</h1>" + failure))
        #expect(await pages.cohorts().contains("<h1>Cohorts</h1>" + failure))
        #expect(
            await pages.rebuilds()
                == Self.table(
                    Self.row(
                        first, "failed", version: 1, progress: "2 of 5 customers (40%)",
                        times: ["2026-01-10 09:00 UTC", "2026-01-10 09:01 UTC", "—"], attempts: 2,
                        outcome: "store: database")))

        // Completed: new terms at 09:05 queue another rebuild, which the application's worker runs.
        let changed = gaveUp.adding(milliseconds: 2 * Self.minute)
        harness.clock.set(changed)
        let again = try await harness.request(
            "PUT", "/v1/apps/\(appId)/analytics-settings", key: ServerHarness.adminKey,
            json: ["commissionRates": ["default": ["standard": 2500, "reduced": 1250]]])
        #expect(again.status == 202, "\(again.text)")
        let second = try #require((again.json["rebuild"] as? [String: Any])?["id"] as? Int)
        #expect(await harness.application.analyticsRebuildWorker.runDue() == 1)
        let completed = """
            <p class="muted rebuilt" id="analytics-rebuild" data-rebuild-id="\(second)" data-status="completed" \
            data-customers-done="5" data-customers-total="5">Figures recomputed for the current commission terms at \
            2026-01-10 09:05 UTC (rebuild \(second), 5 customers).</p>
            """
        let overview = await pages.overview()
        #expect(overview.contains("<h1>Overview</h1>" + completed))
        #expect(!overview.contains("Refresh"))
        #expect(await pages.cohorts().contains("<h1>Cohorts</h1>" + completed))
        #expect(
            await pages.rebuilds()
                == Self.table(
                    Self.row(
                        second, "completed", version: 2, progress: "5 of 5 customers (100%)",
                        times: ["2026-01-10 09:05 UTC", "2026-01-10 09:05 UTC", "2026-01-10 09:05 UTC"], attempts: 1,
                        outcome: "5 contributions changed, 0 rows repaired"),
                    Self.row(
                        first, "superseded", version: 1, progress: "2 of 5 customers (40%)",
                        times: ["2026-01-10 09:00 UTC", "2026-01-10 09:01 UTC", "2026-01-10 09:05 UTC"], attempts: 2,
                        outcome: "superseded by rebuild \(second)")))
        // The API says the same of the latest.
        let latest = try await harness.request(
            "GET", "/v1/apps/\(appId)/analytics-rebuilds/latest", key: ServerHarness.adminKey)
        #expect(latest.json["id"] as? Int == second)
        #expect(latest.json["status"] as? String == "completed")
        #expect(latest.json["customersDone"] as? Int == 5)
    }

    @Test("another app's rebuild is not shown; a hostile error is escaped")
    func otherAppsAndEscaping() async throws {
        let harness = try await ServerHarness()
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        let other = try await harness.createApp()
        let put = try await harness.request(
            "PUT", "/v1/apps/\(other.appId)/analytics-settings", key: ServerHarness.adminKey,
            json: ["commissionRates": ["default": ["standard": 2000, "reduced": 1000]]])
        #expect(put.status == 202, "\(put.text)")
        var client = DashboardClient(harness.application.responder)
        #expect(await client.signIn(app.secretKey).status.code == 303)
        let pages = Pages(client: client, appId: app.appId)
        #expect(!(await pages.overview()).contains("analytics-rebuild"))
        #expect(!(await pages.rebuilds()).contains("data-rebuild-id"))

        let now = harness.clock.now
        let rebuild = AnalyticsRebuildRecord(
            id: 9, appId: app.appId, jobId: 4, settingsVersion: 3, status: .failed, afterCustomerId: 0,
            customersDone: 0, customersTotal: 0, contributionsChanged: 0, rowsRepaired: 0, supersededBy: nil,
            requestedAt: now, startedAt: nil, finishedAt: nil, attempts: 1, lastError: "<b>\"x\"</b>")
        let note = DashboardController.rebuildNote(rebuild, appId: "a&b", refresh: "/dashboard/apps/a%26b").markup
        #expect(note.contains("failed: &lt;b&gt;&quot;x&quot;&lt;/b&gt;.</strong>"))
        #expect(note.contains("stopped after 0 of 0 customers; it started at —."))
        #expect(note.contains("<code>storekeeper analytics rebuild --app a&amp;b</code>"))
    }
}
