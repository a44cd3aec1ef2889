import Foundation

/// `storekeeper admin customers …`: what a customer may use and why, the lifecycle events and
/// stored facts behind it, and the two ways to ask the App Store again (restore, sync).
enum AdminCustomers {
    struct CustomerView: Decodable {
        struct Entitlement: Decodable {
            var entitlementId: String
            var isActive: Bool
            var expiresDate: Int64?
            var productId: String
            var reason: String
        }
        var customerId: String
        var environment: String
        var evaluatedAt: Int64
        var entitlements: [String: Entitlement]
        var notes: [String]?
    }

    static func render(_ customer: CustomerView) -> String {
        var table = TextTable(headers: ["ENTITLEMENT", "ACTIVE", "PRODUCT", "EXPIRES", "WHY"])
        for entitlement in customer.entitlements.values.sorted(by: { $0.entitlementId < $1.entitlementId }) {
            table.add([
                entitlement.entitlementId, entitlement.isActive ? "yes" : "no", entitlement.productId,
                entitlement.expiresDate.map { TextTable.instant($0) } ?? "never", entitlement.reason,
            ])
        }
        var lines = [
            "customer \(customer.customerId) (\(customer.environment)), evaluated \(TextTable.instant(customer.evaluatedAt))",
            table.text,
        ]
        lines += (customer.notes ?? []).map { "note: \($0)" }
        return lines.joined(separator: "\n")
    }

    static func customerPath(_ arguments: CommandLineArguments) -> String {
        AdminCommands.appPath(arguments) + "/customers/\(AdminClient.segment(arguments.positional[1]))"
    }

    /// Restore and sync take the same body: the environment, or the app's default.
    static func refresh(_ route: String, _ summary: String) -> Command {
        AdminCommands.leaf(
            route, summary, arguments: [AdminCommands.app, AdminCommands.user], options: [AdminCommands.environment]
        ) { client, arguments in
            var body: [String: Any] = [:]
            if let environment = arguments.value("--environment") { body["environment"] = environment }
            let answer = try await client.send(
                "POST", customerPath(arguments) + "/" + route, body: try AdminCommands.jsonBody(body))
            try AdminCommands.show(answer, as: CustomerView.self, arguments, render: render)
        }
    }

    static let command = Command(
        name: "customers", summary: "a customer's access, events and facts",
        subcommands: [
            AdminCommands.leaf(
                "show", "what the customer may use, and why, for each entitlement",
                arguments: [AdminCommands.app, AdminCommands.user], options: [AdminCommands.environment]
            ) { client, arguments in
                let query = arguments.value("--environment").map { [("environment", $0)] } ?? []
                try AdminCommands.show(
                    try await client.send("GET", customerPath(arguments), query: query), as: CustomerView.self,
                    arguments, render: render)
            },
            AdminCommands.leaf(
                "events", "the customer's lifecycle events, oldest first",
                arguments: [AdminCommands.app, AdminCommands.user],
                options: [AdminCommands.cursor, AdminCommands.limit]
            ) { client, arguments in
                struct Page: Decodable {
                    struct Item: Decodable {
                        struct Event: Decodable {
                            var type: String
                            var productId: String
                            var environment: String
                        }
                        var sequence: Int64
                        var createdAt: Int64
                        var event: Event
                    }
                    var events: [Item]
                    var nextCursor: String?
                }
                let answer = try await client.send(
                    "GET", customerPath(arguments) + "/events", query: try AdminCommands.page(arguments))
                try AdminCommands.show(answer, as: Page.self, arguments) { page in
                    var table = TextTable(headers: ["SEQUENCE", "CREATED", "TYPE", "PRODUCT", "ENVIRONMENT"])
                    for item in page.events {
                        table.add([
                            String(item.sequence), TextTable.instant(item.createdAt), item.event.type,
                            item.event.productId, item.event.environment,
                        ])
                    }
                    return table.text + (page.nextCursor.map { "\nmore: --cursor \($0)" } ?? "")
                }
            },
            AdminCommands.leaf(
                "facts", "the customer's stored facts (signed transactions, renewal infos, …), oldest first",
                arguments: [AdminCommands.app, AdminCommands.user],
                options: [AdminCommands.cursor, AdminCommands.limit]
            ) { client, arguments in
                struct Page: Decodable {
                    struct Item: Decodable {
                        var sequence: Int64
                        var kind: String
                        var environment: String?
                        var originalTransactionId: String?
                        var signedDate: Int64
                    }
                    var items: [Item]
                    var nextCursor: String?
                }
                let answer = try await client.send(
                    "GET", customerPath(arguments) + "/transactions", query: try AdminCommands.page(arguments))
                try AdminCommands.show(answer, as: Page.self, arguments) { page in
                    var table = TextTable(headers: ["SEQUENCE", "KIND", "ENVIRONMENT", "ORIGINAL", "SIGNED"])
                    for item in page.items {
                        table.add([
                            String(item.sequence), item.kind, item.environment ?? "-",
                            item.originalTransactionId ?? "-",
                            TextTable.instant(item.signedDate),
                        ])
                    }
                    return table.text + (page.nextCursor.map { "\nmore: --cursor \($0)" } ?? "")
                }
            },
            refresh("restore", "ask the App Store for the customer's purchases again (restore)"),
            refresh("sync", "ask the App Store now for the customer's subscription statuses"),
        ])
}
