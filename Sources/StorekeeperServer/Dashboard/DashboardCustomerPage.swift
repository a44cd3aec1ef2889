import AppStoreModels
import Entitlements
import Foundation
import HTTPServer
import Storage
import StorekeeperIngestion

/// The customer page: find a customer by app user id, alias, originalTransactionId or
/// appAccountToken; show the CustomerInfo with the engine's reason for each entitlement and
/// subscription, the timeline of facts and lifecycle events, the raw signed payloads, and the
/// actions (sync with the App Store, replay dead-lettered webhooks) as CSRF-protected forms.
extension DashboardController {
    /// How the search box's text is looked up.
    enum CustomerSearch: String, CaseIterable, Sendable {
        case any
        case appUserId
        case alias
        case originalTransactionId
        case appAccountToken

        var title: String {
            switch self {
            case .any: "Any identifier"
            case .appUserId: "App user id"
            case .alias: "Alias"
            case .originalTransactionId: "originalTransactionId"
            case .appAccountToken: "appAccountToken"
            }
        }

        var lookups: [(String) -> CustomerLookup] {
            switch self {
            case .any:
                [
                    CustomerLookup.appUserId, CustomerLookup.alias, CustomerLookup.originalTransactionId,
                    { CustomerLookup.appAccountToken($0.lowercased()) },
                ]
            case .appUserId: [CustomerLookup.appUserId]
            case .alias: [CustomerLookup.alias]
            case .originalTransactionId: [CustomerLookup.originalTransactionId]
            case .appAccountToken: [{ CustomerLookup.appAccountToken($0.lowercased()) }]
            }
        }
    }

    /// The most facts and events of each kind one page shows (newest kept).
    static let timelineLimit = 200

    /// Everything the customer page shows, read in one snapshot.
    struct CustomerView: Sendable {
        var customer: CustomerRecord
        var info: CustomerInfo
        var events: [StoredEvent]
        var facts: [StoredFact]
        var deadLettered: [OutboxEntry]
    }

    @Sendable func customers(_ request: HTTPRequest, _ session: DashboardSession, _ app: AppRuntime) async throws
        -> HTTPResponse
    {
        let query = (request.queryValue("q") ?? "").trimmingCharacters(in: .whitespaces)
        let search = CustomerSearch(rawValue: request.queryValue("by") ?? "any") ?? .any
        let environment = try Self.environment(request, app: app)
        let pageContext = context(session, appId: app.id, section: .customers)
        guard !query.isEmpty else {
            return DashboardHTTP.page(
                Self.customerPage(
                    query: query, search: search, environment: environment, app: app, view: nil, notFound: false,
                    notice: nil, context: pageContext))
        }
        guard CustomersController.isValidUserId(query) else {
            throw DashboardFailure(status: .badRequest, message: "Search for 1 to 256 printable characters.")
        }
        let appId = app.id
        let now = clock.now()
        let view = try await apps.read { reader -> CustomerView? in
            var found: CustomerRecord?
            for lookup in search.lookups where found == nil {
                found = try reader.customer(appId: appId, lookup(query))
            }
            guard let customer = found else { return nil }
            let info = try CustomerStateUpdater.current(
                customer: customer, appUserId: customer.appUserId, environment: environment, in: reader, now: now)
            let events = try Self.newest(Self.timelineLimit) { after, limit in
                try reader.events(customerId: customer.id, after: after, limit: limit)
            }
            var facts: [StoredFact] = []
            for kind in [FactKind.transaction, .renewalInfo, .notification] {
                facts += try Self.newest(Self.timelineLimit) { after, limit in
                    try reader.storedFacts(customerId: customer.id, kind: kind, after: after, limit: limit)
                }
            }
            var deadLettered: [OutboxEntry] = []
            for event in events where event.event.environment == environment {
                deadLettered += try reader.outboxEntries(eventSequence: event.sequence).filter {
                    $0.deadLetteredAt != nil && $0.deliveredAt == nil
                }
            }
            return CustomerView(
                customer: customer, info: info, events: events, facts: facts, deadLettered: deadLettered)
        }
        let notice = Self.notice(request.queryValue("notice"))
        return DashboardHTTP.page(
            Self.customerPage(
                query: query, search: search, environment: environment, app: app, view: view, notFound: view == nil,
                notice: notice, context: pageContext),
            status: view == nil ? .notFound : .ok)
    }

    /// Pages through a cursor-paged read and keeps the newest `count` rows.
    static func newest<Row: Sendable>(_ count: Int, _ page: (Int64?, Int) throws -> [Row]) throws -> [Row]
    where Row: SequencedRow {
        var rows: [Row] = []
        var after: Int64?
        while true {
            let batch = try page(after, 500)
            rows += batch
            if rows.count > count { rows.removeFirst(rows.count - count) }
            guard batch.count == 500, let last = batch.last else { return rows }
            after = last.sequence
        }
    }

    /// The environment the request asks for, or the app's default.
    static func environment(_ request: HTTPRequest, app: AppRuntime) throws -> AppStoreEnvironment {
        do {
            return try app.environment(try CustomersController.environment(request.queryValue("environment")))
        } catch let error as IngestionError {
            throw DashboardFailure(status: .badRequest, message: error.message)
        }
    }

    /// A notice the page was redirected with: a fixed sentence per known code, nothing else.
    static func notice(_ code: String?) -> (text: String, isError: Bool)? {
        guard let code, code.utf8.count <= 64 else { return nil }
        switch code {
        case "synced": return ("Synced with the App Store.", false)
        case "replayed": return ("The delivery is queued again.", false)
        case "replay_not_found": return ("That delivery is not dead-lettered (any more).", true)
        default:
            guard code.hasPrefix("sync_"), code.dropFirst(5).allSatisfy({ $0.isLetter || $0 == "_" }) else {
                return nil
            }
            return ("The sync failed: \(code.dropFirst(5)).", true)
        }
    }

    @Sendable func syncCustomer(
        _ request: HTTPRequest, _ context: RequestContext, _ form: [String: String], _ session: DashboardSession,
        _ app: AppRuntime
    ) async throws -> HTTPResponse {
        let appUserId = form["appUserId"] ?? ""
        guard CustomersController.isValidUserId(appUserId) else {
            throw DashboardFailure(status: .badRequest, message: "appUserId must be 1 to 256 printable characters.")
        }
        let environment = try CustomersController.environment(form["environment"])
        let code: String
        do {
            _ = try await sync.sync(app: app, appUserId: appUserId, environment: environment)
            metrics.recordCustomerSync(outcome: "synced")
            code = "synced"
        } catch {
            metrics.recordCustomerSync(outcome: error.code == .rateLimited ? "rate_limited" : "failed")
            code = "sync_" + error.code.rawValue
        }
        return DashboardHTTP.redirect(
            DashboardHTTP.link(
                "/dashboard/apps/\(DashboardHTTP.encode(app.id))/customers",
                [("q", appUserId), ("by", "appUserId"), ("environment", environment?.rawValue), ("notice", code)]))
    }

    // MARK: Rendering

    static func customerPage(
        query: String, search: CustomerSearch, environment: AppStoreEnvironment, app: AppRuntime, view: CustomerView?,
        notFound: Bool, notice: (text: String, isError: Bool)?, context: DashboardPageContext
    ) -> HTML {
        let base = "/dashboard/apps/" + DashboardHTTP.encode(app.id)
        let options = CustomerSearch.allCases.map { option -> HTML in
            option == search
                ? "<option value=\"\(option.rawValue)\" selected>\(option.title)</option>"
                : "<option value=\"\(option.rawValue)\">\(option.title)</option>"
        }
        let environments = app.record.environments.map { option -> HTML in
            option == environment
                ? "<option selected>\(option.rawValue)</option>" : "<option>\(option.rawValue)</option>"
        }
        var body: HTML = """
            <h1>Customers</h1>
            <form class="search" method="get" action="\(base)/customers" role="search">\
            <label for="q">Identifier<input id="q" name="q" value="\(query)" maxlength="256" required></label>\
            <label for="by">Look up by<select id="by" name="by">\(options)</select></label>\
            <label for="environment">Environment<select id="environment" name="environment">\(environments)</select>\
            </label><button type="submit">Search</button></form>
            """
        if let notice {
            body = "\(body)<p class=\"notice\(notice.isError ? " error" : "")\" role=\"status\">\(notice.text)</p>"
        }
        if notFound {
            body = "\(body)<p class=\"notice error\" role=\"status\">No customer is known by \(query).</p>"
        }
        if let view {
            body = "\(body)\(customerDetail(view, environment: environment, base: base, context: context))"
        }
        return DashboardPages.layout(title: "Customers", context: context, body: body)
    }

    static func customerDetail(
        _ view: CustomerView, environment: AppStoreEnvironment, base: String, context: DashboardPageContext
    ) -> HTML {
        let customer = view.customer
        let info = view.info
        let entitlements = info.entitlements.values.sorted { $0.entitlementId < $1.entitlementId }.map {
            entitlement -> HTML in
            """
            <tr><th scope="row">\(entitlement.entitlementId)</th>\
            <td class="\(entitlement.isActive ? "active" : "inactive")">\(entitlement.isActive ? "active" : "inactive")</td>\
            <td>\(entitlement.productId)</td><td>\(DashboardPages.time(entitlement.expiresDate))</td>\
            <td>\(entitlement.reason)</td></tr>
            """
        }
        let subscriptions = info.subscriptions.values.sorted { $0.productId < $1.productId }.map {
            subscription -> HTML in
            """
            <tr><th scope="row">\(subscription.productId)</th><td>\(subscription.status.rawValue)</td>\
            <td>\(subscription.originalTransactionId)</td><td>\(DashboardPages.time(subscription.expiresDate))</td>\
            <td>\(subscription.willRenew ? "yes" : "no")</td><td>\(subscription.price?.description)</td>\
            <td>\(subscription.reason)</td></tr>
            """
        }
        let purchases = info.nonSubscriptionPurchases.map { purchase -> HTML in
            "<li>\(purchase.productId) · \(purchase.transactionId) · \(DashboardPages.time(purchase.purchaseDate))</li>"
        }
        let known: [(String, [String])] = [
            ("Aliases", customer.aliases), ("appAccountTokens", customer.appAccountTokens),
            ("originalTransactionIds", customer.originalTransactionIds),
        ]
        let identifiers = known.map { name, values -> HTML in
            "<dt>\(name)</dt><dd>\(values.isEmpty ? "—" : values.joined(separator: ", "))</dd>"
        }
        let replays = view.deadLettered.map { delivery -> HTML in
            """
            <li>Delivery \(delivery.id) to \(delivery.endpointId) (event \(delivery.eventSequence), \
            \(delivery.attempts) attempts) <form class="inline" method="post" \
            action="\(base)/deliveries/\(delivery.id)/replay">\(DashboardPages.csrfField(context.csrfToken))\
            <input type="hidden" name="returnTo" value="customer">\
            <input type="hidden" name="appUserId" value="\(customer.appUserId)">\
            <button type="submit" class="secondary">Replay delivery \(delivery.id)</button></form></li>
            """
        }
        return """
            <h2 id="customer">Customer \(customer.appUserId)</h2>
            <dl><dt>First seen</dt><dd>\(DashboardPages.time(customer.firstSeenAt))</dd>\
            <dt>Last seen</dt><dd>\(DashboardPages.time(customer.lastSeenAt))</dd>\(identifiers)\
            <dt>Active entitlements</dt><dd id="active-entitlements">\
            \(info.activeEntitlementIds.isEmpty ? "none" : info.activeEntitlementIds.joined(separator: ", "))</dd></dl>
            <h2>Actions</h2>
            <form method="post" action="\(base)/customers/sync">\(DashboardPages.csrfField(context.csrfToken))\
            <input type="hidden" name="appUserId" value="\(customer.appUserId)">\
            <input type="hidden" name="environment" value="\(environment.rawValue)">\
            <button type="submit">Sync with the App Store (restore)</button></form>
            \(replays.isEmpty ? "<p class=\"muted\">No dead-lettered webhook deliveries.</p>" as HTML : "<ul>\(replays)</ul>")
            <h2>Entitlements (\(environment.rawValue))</h2>
            <div class="scroll"><table id="entitlements"><thead><tr><th scope="col">Entitlement</th>\
            <th scope="col">State</th><th scope="col">Product</th><th scope="col">Expires</th>\
            <th scope="col">Why</th></tr></thead><tbody>\(entitlements)</tbody></table></div>
            <h2>Subscriptions</h2>
            <div class="scroll"><table id="subscriptions"><thead><tr><th scope="col">Product</th>\
            <th scope="col">Status</th><th scope="col">originalTransactionId</th><th scope="col">Expires</th>\
            <th scope="col">Renews</th><th scope="col">Price</th><th scope="col">Why</th></tr></thead>\
            <tbody>\(subscriptions)</tbody></table></div>
            \(purchases.isEmpty ? "" as HTML : "<h2>Other purchases</h2><ul>\(purchases)</ul>")
            \(info.notes.isEmpty ? "" as HTML : "<h2>Notes</h2><ul>\(info.notes.map { "<li>\($0)</li>" as HTML })</ul>")
            <h2>Timeline</h2>
            \(timeline(view))
            """
    }

    /// Facts and events in one list, newest first; each fact with its raw signed payload.
    static func timeline(_ view: CustomerView) -> HTML {
        enum Entry {
            case fact(StoredFact)
            case event(StoredEvent)

            var instant: Timestamp {
                switch self {
                case .fact(let fact): fact.receivedAt
                case .event(let event): event.event.occurredAt
                }
            }
        }
        let entries = (view.facts.map(Entry.fact) + view.events.map(Entry.event)).sorted { $0.instant > $1.instant }
        let rows = entries.map { entry -> HTML in
            switch entry {
            case .event(let stored):
                let event = stored.event
                return """
                    <tr><td>\(DashboardPages.time(event.occurredAt))</td><td>event</td>\
                    <td>\(event.type.rawValue)\(stored.retractedAt == nil ? "" : " (retracted)")</td>\
                    <td>\(event.environment.rawValue)</td><td>\(event.productId)</td><td>\(event.summary)</td></tr>
                    """
            case .fact(let fact):
                let raw: HTML =
                    fact.raw.map {
                        "<details><summary>Signed payload (\($0.utf8.count) bytes)</summary><pre>\($0)</pre></details>"
                    } ?? "<span class=\"muted\">from a receipt</span>"
                let (what, product): (String, String?) =
                    switch fact.fact {
                    case .transaction(let transaction)?: ("transaction", transaction.productId)
                    case .renewalInfo(let renewal)?: ("renewal info", renewal.productId)
                    case .notification(let notification)?: (notification.type, notification.productId)
                    case .playSubscription(let snapshot)?:
                        ("Google Play subscription", snapshot.lineItems.first?.productId)
                    case .playProductPurchase(let purchase)?: ("Google Play purchase", purchase.productId)
                    case .playVoidedPurchase?: ("Google Play voided purchase", nil)
                    case .playOrder(let order)?: ("Google Play order", order.orderId)
                    case nil: (fact.kind.rawValue, nil)
                    }
                return """
                    <tr><td>\(DashboardPages.time(fact.receivedAt))</td><td>fact</td>\
                    <td>\(what), signed \(DashboardPages.time(fact.signedDate))</td>\
                    <td>\(fact.environment?.rawValue)</td>\
                    <td>\(product ?? "—") / \(fact.originalTransactionId ?? "—")</td><td>\(raw)</td></tr>
                    """
            }
        }
        return """
            <div class="scroll"><table id="timeline"><thead><tr><th scope="col">When</th><th scope="col">Kind</th>\
            <th scope="col">What</th><th scope="col">Environment</th><th scope="col">Product / original</th>\
            <th scope="col">Detail</th></tr></thead><tbody>\(rows)</tbody></table></div>
            """
    }
}

/// A row of a cursor-paged read (its cursor).
protocol SequencedRow {
    var sequence: Int64 { get }
}

extension StoredEvent: SequencedRow {}
extension StoredFact: SequencedRow {}
