import Foundation

/// `storekeeper admin notifications recent`: the App Store notifications an app received,
/// newest first, with what became of each (`GET /v1/apps/{appId}/notifications`).
enum AdminNotifications {
    struct Listed: Decodable {
        var id: Int64
        var notificationUUID: String
        var notificationType: String
        var subtype: String?
        var environment: String?
        var originalTransactionId: String?
        var receivedAt: Int64
        var outcome: String?
    }

    struct Page: Decodable {
        var notifications: [Listed]
        var nextCursor: String?
    }

    static let command = Command(
        name: "notifications", summary: "App Store notifications an app received",
        subcommands: [
            AdminCommands.leaf(
                "recent", "list notifications, newest first, with their outcome",
                discussion: """
                    Outcomes: applied (the customer's state was re-evaluated), unclaimed (no customer owns
                    the purchase yet), recorded (no customer data, e.g. TEST). A full page ends with the
                    --cursor that continues it.
                    """,
                arguments: [AdminCommands.app],
                options: [
                    Option(
                        name: "--outcome", valueName: "OUTCOME", help: "only this outcome",
                        choices: ["applied", "unclaimed", "recorded"]),
                    Option(name: "--type", valueName: "TYPE", help: "only this notification type (e.g. DID_RENEW)"),
                    AdminCommands.cursor, AdminCommands.limit,
                ]
            ) { client, arguments in
                var query = try AdminCommands.page(arguments)
                if let outcome = arguments.value("--outcome") { query.append(("outcome", outcome)) }
                if let type = arguments.value("--type") { query.append(("type", type)) }
                let answer = try await client.send(
                    "GET", AdminCommands.appPath(arguments) + "/notifications", query: query)
                try AdminCommands.show(answer, as: Page.self, arguments) { page in
                    var table = TextTable(headers: [
                        "ID", "RECEIVED", "TYPE", "SUBTYPE", "ENVIRONMENT", "ORIGINAL TRANSACTION", "OUTCOME",
                    ])
                    for notification in page.notifications {
                        table.add([
                            String(notification.id), TextTable.instant(notification.receivedAt),
                            notification.notificationType, notification.subtype ?? "-",
                            notification.environment ?? "-", notification.originalTransactionId ?? "-",
                            notification.outcome ?? "-",
                        ])
                    }
                    return table.text + (page.nextCursor.map { "\nmore: --cursor \($0)" } ?? "")
                }
            }
        ])
}
