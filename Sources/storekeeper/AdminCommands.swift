import Foundation

/// `storekeeper admin …`: a client of a running server's admin and app APIs, for operators who
/// would otherwise write curl by hand. Every subcommand maps to one route of the server's API
/// (docs/server.md). Tables by default, the server's JSON verbatim with `--json`; a
/// refusal is one line naming the server's code and HTTP status, exit 1.
///
/// The key: `--key`, else `--key-file`, else `STOREKEEPER_ADMIN_KEY`. It is sent only in the
/// `Authorization` header and never printed, not even in an error.
enum AdminCommands {
    /// `storekeeper serve` listens on 127.0.0.1:8080 unless configured otherwise.
    static let defaultURL = "http://127.0.0.1:8080"

    static let connectionOptions = [
        Option(name: "--url", valueName: "URL", help: "the server", defaultValue: defaultURL),
        Option(name: "--key", valueName: "KEY", help: "an admin key (else --key-file, else STOREKEEPER_ADMIN_KEY)"),
        Option(name: "--key-file", valueName: "FILE", help: "a file holding the admin key"),
    ]
    static let jsonFlag = Flag(name: "--json", help: "print the server's JSON answer")

    static let app = Argument(name: "APP", help: "the app's id")
    static let user = Argument(name: "USER", help: "the customer's app user id")
    static let environment = Option(
        name: "--environment", valueName: "ENV", help: "the App Store environment (default: the app's first)",
        choices: ["Production", "Sandbox", "Xcode", "LocalTesting"])
    static let ifVersion = Option(
        name: "--if-version", valueName: "N",
        help: "apply only if the stored version is still N (If-Match; else 412 version_mismatch)")
    static let cursor = Option(name: "--cursor", valueName: "CURSOR", help: "continue after this cursor")
    static let limit = Option(name: "--limit", valueName: "N", help: "at most N items (the server bounds it)")

    /// A leaf: connection options, `--json`, and an action given a connected client.
    static func leaf(
        _ name: String, _ summary: String, discussion: String? = nil, arguments: [Argument] = [],
        options: [Option] = [], flags: [Flag] = [],
        _ body: @escaping @Sendable (AdminClient, CommandLineArguments) async throws -> Void
    ) -> Command {
        Command(
            name: name, summary: summary, discussion: discussion, arguments: arguments,
            options: options + connectionOptions, flags: flags + [jsonFlag],
            action: { arguments in
                try await body(try client(arguments), arguments)
                return 0
            })
    }

    static let command: Command = Command(
        name: "admin", summary: "manage a running server through its admin and app APIs",
        discussion: """
            The key comes from --key, --key-file or STOREKEEPER_ADMIN_KEY (an admin key: the configured
            adminKey or an sk_adm_ key); it is never printed. Tables by default; --json prints the
            server's answer as sent. A refusal prints its code and HTTP status (app_exists (HTTP 409): …)
            and exits 1.
            """,
        subcommands: [
            AdminApps.command, AdminKeys.command, catalog, webhooks, deliveries, AdminCustomers.command,
            AdminNotifications.command,
        ])

    // MARK: Connection

    static func client(_ arguments: CommandLineArguments) throws -> AdminClient {
        let text = arguments.value("--url") ?? defaultURL
        guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme),
            url.host != nil, text.utf8.count <= 2048
        else { throw UsageError("--url must be an http or https URL") }
        return AdminClient(baseURL: url, key: try key(arguments))
    }

    static func key(_ arguments: CommandLineArguments) throws -> String {
        let given = arguments.value("--key")
        let file = arguments.value("--key-file")
        if given != nil && file != nil { throw UsageError("give the key with --key or --key-file, not both") }
        let key: String
        if let given {
            key = given
        } else if let file {
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: file))
            } catch {
                throw AdminFailure.local("cannot read the key file \(file)")
            }
            guard data.count <= 4096 else { throw AdminFailure.local("the key file \(file) is too large for a key") }
            key = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        } else if let environment = ProcessInfo.processInfo.environment["STOREKEEPER_ADMIN_KEY"], !environment.isEmpty {
            key = environment.trimmingCharacters(in: .whitespacesAndNewlines)
        } else {
            throw UsageError("no admin key: give --key, --key-file or STOREKEEPER_ADMIN_KEY")
        }
        // A header value cannot hold control characters; refuse instead of sending a broken one.
        guard !key.isEmpty, key.utf8.count <= 1024,
            !key.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F })
        else { throw UsageError("the admin key is empty, too long or holds spaces or control characters") }
        return key
    }

    // MARK: Output

    /// The server's JSON as sent (`--json`), or the table `render` makes of it.
    static func show<T: Decodable>(
        _ answer: AdminClient.Answer, as type: T.Type, _ arguments: CommandLineArguments, render: (T) -> String
    ) throws {
        if arguments.has("--json") {
            print(String(decoding: answer.body, as: UTF8.self))
            return
        }
        let value: T
        do {
            value = try JSONDecoder().decode(T.self, from: answer.body)
        } catch {
            throw AdminFailure.local("the server's answer is not the expected \(T.self) (try --json)")
        }
        print(render(value))
    }

    static func jsonBody(_ object: [String: Any]) throws -> Data {
        try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }

    /// A JSON file given as an argument (`-` for standard input), checked to be a JSON object.
    static func jsonObject(file: String) throws -> [String: Any] {
        let data: Data
        do {
            data = try Input.read(file)
        } catch let error as UsageError {
            throw error
        } catch {
            throw AdminFailure.local("cannot read \(file)")
        }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw AdminFailure.local("\(file) is not a JSON object")
        }
        return object
    }

    /// `If-Match` for `--if-version N`.
    static func ifMatch(_ arguments: CommandLineArguments) throws -> [String: String] {
        guard let text = arguments.value("--if-version") else { return [:] }
        guard let version = Int64(text), version >= 0 else { throw UsageError("--if-version must be a version number") }
        return ["If-Match": "\"\(version)\""]
    }

    static func page(_ arguments: CommandLineArguments) throws -> [(String, String)] {
        var query: [(String, String)] = []
        if let cursor = arguments.value("--cursor") { query.append(("cursor", cursor)) }
        if let limit = arguments.value("--limit") {
            guard let count = Int(limit), count > 0 else { throw UsageError("--limit must be a positive number") }
            query.append(("limit", String(count)))
        }
        return query
    }

    static func appPath(_ arguments: CommandLineArguments) -> String {
        "/v1/apps/\(AdminClient.segment(arguments.positional[0]))"
    }

    // MARK: Catalog

    struct CatalogView: Decodable {
        struct Product: Decodable {
            var productId: String
            var kind: String
            var subscriptionGroup: String?
            var entitlementIds: [String]
        }
        var products: [Product]
        var version: Int64?
    }

    static func render(_ catalog: CatalogView) -> String {
        var table = TextTable(headers: ["PRODUCT", "KIND", "GROUP", "ENTITLEMENTS"])
        for product in catalog.products {
            table.add([
                product.productId, product.kind, product.subscriptionGroup ?? "-",
                product.entitlementIds.joined(separator: ","),
            ])
        }
        return "catalog version \(catalog.version ?? 0)\n" + table.text
    }

    static let catalog = Command(
        name: "catalog", summary: "an app's product catalog and entitlement mapping",
        subcommands: [
            leaf("get", "print the catalog", arguments: [app]) { client, arguments in
                try show(try await client.send("GET", appPath(arguments) + "/catalog"), as: CatalogView.self, arguments)
                { render($0) }
            },
            leaf(
                "put", "replace the catalog with a JSON file ({\"products\": [...]}, as catalog get --json prints)",
                arguments: [app, Argument(name: "FILE", help: "the catalog (JSON; - for standard input)")],
                options: [ifVersion]
            ) { client, arguments in
                var body = try jsonObject(file: arguments.positional[1])
                // A file saved from `catalog get --json` carries the version it was read at; the
                // version to match goes in If-Match, never in the body.
                body["version"] = nil
                let answer = try await client.send(
                    "PUT", appPath(arguments) + "/catalog", body: try jsonBody(body),
                    headers: try ifMatch(arguments))
                try show(answer, as: CatalogView.self, arguments) { render($0) }
            },
        ])

    // MARK: Webhooks and deliveries

    struct EndpointView: Decodable {
        var id: String
        var url: String
        var enabled: Bool
        var secret: String?
        var version: Int64
    }

    static let webhooks = Command(
        name: "webhooks", summary: "an app's webhook endpoints",
        subcommands: [
            leaf("list", "list the endpoints", arguments: [app]) { client, arguments in
                struct List: Decodable { var endpoints: [EndpointView] }
                try show(try await client.send("GET", appPath(arguments) + "/webhooks"), as: List.self, arguments) {
                    var table = TextTable(headers: ["ID", "ENABLED", "VERSION", "URL"])
                    for endpoint in $0.endpoints {
                        table.add([
                            endpoint.id, endpoint.enabled ? "yes" : "no", String(endpoint.version), endpoint.url,
                        ])
                    }
                    return table.text
                }
            },
            leaf(
                "add", "add an endpoint; its signing secret is printed once",
                arguments: [app],
                options: [
                    Option(name: "--endpoint-url", valueName: "URL", help: "where events are POSTed", isRequired: true),
                    Option(
                        name: "--secret-file", valueName: "FILE",
                        help: "the signing secret (default: the server makes one)"),
                ],
                flags: [Flag(name: "--disabled", help: "create it disabled")]
            ) { client, arguments in
                var body: [String: Any] = ["url": try arguments.require("--endpoint-url")]
                if arguments.has("--disabled") { body["enabled"] = false }
                if let file = arguments.value("--secret-file") { body["secret"] = try secret(file: file) }
                let answer = try await client.send("POST", appPath(arguments) + "/webhooks", body: try jsonBody(body))
                try show(answer, as: EndpointView.self, arguments) {
                    "endpoint \($0.id) (version \($0.version)) for \($0.url)\nsigning secret (shown once): \($0.secret ?? "-")"
                }
            },
            removeEndpoint, testEndpoint,
        ])

    static let endpoint = Argument(name: "ENDPOINT", help: "the endpoint's id (webhooks list)")

    static let removeEndpoint = leaf(
        "remove", "remove an endpoint with its queued and failed deliveries", arguments: [app, endpoint]
    ) { client, arguments in
        let id = arguments.positional[1]
        _ = try await client.send("DELETE", appPath(arguments) + "/webhooks/\(AdminClient.segment(id))")
        // 204 has no body: --json prints an object so scripts always get JSON.
        print(
            arguments.has("--json")
                ? String(decoding: try jsonBody(["removed": id]), as: UTF8.self) : "removed endpoint \(id)")
    }

    /// What the server answers for a test event (`WebhookTestResult`).
    struct TestResult: Decodable {
        var endpointId: String
        var eventId: String
        var delivered: Bool
        var status: Int?
        var error: String?
        var response: String?
    }

    static let testEndpoint = leaf(
        "test", "send a signed TEST event to an endpoint now and show what it answered (exit 1 unless 2xx)",
        arguments: [app, endpoint]
    ) { client, arguments in
        let answer = try await client.send(
            "POST", appPath(arguments) + "/webhooks/\(AdminClient.segment(arguments.positional[1]))/test")
        try show(answer, as: TestResult.self, arguments) { result in
            var lines = ["test event \(result.eventId) to endpoint \(result.endpointId)"]
            lines.append("status: \(result.status.map(String.init) ?? "no answer")")
            if let error = result.error { lines.append("error: \(error)") }
            if let response = result.response, !response.isEmpty {
                // The endpoint's text, on one line and without control characters for the terminal.
                let printable = String(
                    String.UnicodeScalarView(
                        response.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }))
                lines.append("response: \(printable)")
            }
            return lines.joined(separator: "\n")
        }
        guard let result = try? JSONDecoder().decode(TestResult.self, from: answer.body), result.delivered else {
            throw AdminFailure.local("the endpoint did not accept the test event")
        }
    }

    static func secret(file: String) throws -> String {
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: file)) else {
            throw AdminFailure.local("cannot read \(file)")
        }
        guard data.count <= 4096 else { throw AdminFailure.local("\(file) is too large for a secret") }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static let deliveries = Command(
        name: "deliveries", summary: "webhook deliveries that failed",
        subcommands: [
            leaf(
                "failed", "list dead-lettered and failing deliveries, oldest first", arguments: [app],
                options: [cursor, limit]
            ) { client, arguments in
                struct Delivery: Decodable {
                    var deliveryId: Int64
                    var endpointId: String
                    var eventSequence: Int64
                    var attempts: Int
                    var lastError: String?
                    var deadLetteredAt: Int64?
                }
                struct List: Decodable { var deliveries: [Delivery] }
                let answer = try await client.send(
                    "GET", appPath(arguments) + "/webhooks/deliveries/failed", query: try page(arguments))
                try show(answer, as: List.self, arguments) {
                    var table = TextTable(headers: [
                        "DELIVERY", "ENDPOINT", "EVENT", "ATTEMPTS", "ERROR", "DEAD-LETTERED",
                    ])
                    for delivery in $0.deliveries {
                        table.add([
                            String(delivery.deliveryId), delivery.endpointId, String(delivery.eventSequence),
                            String(delivery.attempts), delivery.lastError ?? "-",
                            TextTable.instant(delivery.deadLetteredAt),
                        ])
                    }
                    return table.text
                }
            },
            leaf(
                "replay", "queue a dead-lettered delivery again",
                arguments: [app, Argument(name: "DELIVERY", help: "the delivery id (deliveries failed)")]
            ) { client, arguments in
                guard let id = Int64(arguments.positional[1]), id >= 0 else {
                    throw UsageError("DELIVERY must be a delivery id (a number)")
                }
                struct Accepted: Decodable { var deliveryId: Int64 }
                let answer = try await client.send(
                    "POST", appPath(arguments) + "/webhooks/deliveries/\(id)/replay")
                try show(answer, as: Accepted.self, arguments) { "delivery \($0.deliveryId) queued again" }
            },
        ])
}
