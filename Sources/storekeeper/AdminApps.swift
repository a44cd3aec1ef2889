import Foundation

/// `storekeeper admin apps …`: the apps (tenants) of a server, `/v1/admin/apps`. Root
/// certificates and the App Store Connect key are read from PEM files; the body sent is the
/// server's `AppInput`, so a `--file` and the flags can be combined (the flags win).
enum AdminApps {
    struct AppView: Decodable {
        struct Connect: Decodable {
            var keyId: String
            var issuerId: String
        }
        var id: String
        var bundleId: String
        var appAppleId: Int64?
        var environments: [String]
        var hasSharedSecret: Bool
        var rootCertificates: [String]
        var appStoreConnect: Connect?
        var transferPolicy: String
        var version: Int64
    }

    static let fieldOptions = [
        Option(
            name: "--file", valueName: "FILE", help: "the app as JSON (the server's AppInput; - for standard input)"),
        Option(name: "--bundle-id", valueName: "ID", help: "the bundle id"),
        Option(name: "--app-apple-id", valueName: "N", help: "the app's Apple id (needed for Production)"),
        Option(
            name: "--environment", valueName: "ENV", help: "an environment the app accepts (repeatable)",
            isRepeatable: true, choices: ["Production", "Sandbox", "Xcode", "LocalTesting"]),
        Option(
            name: "--root", valueName: "FILE",
            help: "a root certificate to pin, PEM or DER (repeatable; replaces the list)",
            isRepeatable: true),
        Option(name: "--shared-secret-file", valueName: "FILE", help: "the app's shared secret (StoreKit 1)"),
        Option(name: "--connect-key-file", valueName: "FILE", help: "the App Store Connect API key (.p8, PEM)"),
        Option(name: "--connect-key-id", valueName: "ID", help: "the App Store Connect key id"),
        Option(name: "--connect-issuer-id", valueName: "ID", help: "the App Store Connect issuer id"),
        Option(
            name: "--connect-base-url", valueName: "URL",
            help: "with the key: another App Store Server API (the simulator's; default: Apple's)"),
        Option(
            name: "--transfer-policy", valueName: "POLICY", help: "who owns a purchase posted by another customer"),
    ]

    static let command = Command(
        name: "apps", summary: "the server's apps",
        subcommands: [
            AdminCommands.leaf("list", "list the apps") { client, arguments in
                struct List: Decodable { var apps: [AppView] }
                try AdminCommands.show(try await client.send("GET", "/v1/admin/apps"), as: List.self, arguments) {
                    var table = TextTable(headers: ["ID", "BUNDLE", "ENVIRONMENTS", "ROOTS", "VERSION"])
                    for app in $0.apps {
                        table.add([
                            app.id, app.bundleId, app.environments.joined(separator: ","),
                            String(app.rootCertificates.count), String(app.version),
                        ])
                    }
                    return table.text
                }
            },
            AdminCommands.leaf("show", "print one app", arguments: [AdminCommands.app]) { client, arguments in
                try AdminCommands.show(
                    try await client.send("GET", "/v1/admin/apps/\(AdminClient.segment(arguments.positional[0]))"),
                    as: AppView.self, arguments, render: render)
            },
            AdminCommands.leaf(
                "create", "create an app from flags and/or a JSON file; 409 app_exists if the id is taken",
                options: [Option(name: "--id", valueName: "ID", help: "the app's id (or \"id\" in --file)")]
                    + fieldOptions
            ) { client, arguments in
                var body = try input(arguments)
                if let id = arguments.value("--id") { body["id"] = id }
                guard body["id"] != nil else { throw UsageError("missing --id (or \"id\" in --file)") }
                try AdminCommands.show(
                    try await client.send("POST", "/v1/admin/apps", body: try AdminCommands.jsonBody(body)),
                    as: AppView.self, arguments, render: render)
            },
            AdminCommands.leaf(
                "update", "change the fields given; the others keep their stored value",
                arguments: [AdminCommands.app], options: fieldOptions + [AdminCommands.ifVersion]
            ) { client, arguments in
                let body = try input(arguments)
                guard !body.isEmpty else { throw UsageError("nothing to change: give --file or a field option") }
                try AdminCommands.show(
                    try await client.send(
                        "PUT", "/v1/admin/apps/\(AdminClient.segment(arguments.positional[0]))",
                        body: try AdminCommands.jsonBody(body), headers: try AdminCommands.ifMatch(arguments)),
                    as: AppView.self, arguments, render: render)
            },
        ])

    static func render(_ app: AppView) -> String {
        var lines = [
            "app \(app.id) (version \(app.version))",
            "bundle id: \(app.bundleId)",
            "app Apple id: \(app.appAppleId.map(String.init) ?? "-")",
            "environments: \(app.environments.joined(separator: ", "))",
            "shared secret: \(app.hasSharedSecret ? "set" : "not set")",
            "App Store Connect key: \(app.appStoreConnect.map { "\($0.keyId) (issuer \($0.issuerId))" } ?? "not set")",
            "transfer policy: \(app.transferPolicy)",
            "root certificates: \(app.rootCertificates.isEmpty ? "none" : "")",
        ]
        lines += app.rootCertificates.map { "  \($0)" }
        return lines.joined(separator: "\n").replacingOccurrences(of: ": \n", with: ":\n")
    }

    /// The `AppInput` body: `--file` first, then each flag given replaces its field.
    static func input(_ arguments: CommandLineArguments) throws -> [String: Any] {
        var body = try arguments.value("--file").map(AdminCommands.jsonObject(file:)) ?? [:]
        if let bundleId = arguments.value("--bundle-id") { body["bundleId"] = bundleId }
        if let appleId = arguments.value("--app-apple-id") {
            guard let number = Int64(appleId), number > 0 else { throw UsageError("--app-apple-id must be a number") }
            body["appAppleId"] = number
        }
        let environments = arguments.values("--environment")
        if !environments.isEmpty { body["environments"] = environments }
        let roots = arguments.values("--root")
        if !roots.isEmpty { body["rootCertificatesPEM"] = try roots.map(certificatePEM) }
        if let file = arguments.value("--shared-secret-file") {
            body["sharedSecret"] = try AdminCommands.secret(file: file)
        }
        if let policy = arguments.value("--transfer-policy") { body["transferPolicy"] = policy }
        let connect = ["--connect-key-file", "--connect-key-id", "--connect-issuer-id"].map { arguments.value($0) }
        if connect.contains(where: { $0 != nil }) || arguments.value("--connect-base-url") != nil {
            guard let file = connect[0], let keyId = connect[1], let issuerId = connect[2] else {
                throw UsageError("--connect-key-file, --connect-key-id and --connect-issuer-id go together")
            }
            var credentials = ["keyId": keyId, "issuerId": issuerId, "privateKeyPEM": try pem(file)]
            credentials["baseURL"] = arguments.value("--connect-base-url")
            body["appStoreConnect"] = credentials
        }
        return body
    }

    /// A certificate file as PEM: Apple ships its roots as DER (`AppleRootCA-G3.cer`), which is
    /// armored here; the server parses and checks it either way.
    static func certificatePEM(_ file: String) throws -> String {
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: file)) else {
            throw AdminFailure.local("cannot read \(file)")
        }
        guard data.count <= 64 * 1024 else { throw AdminFailure.local("\(file) is too large for a certificate") }
        if let text = String(data: data, encoding: .utf8), text.contains("-----BEGIN ") { return text }
        let base64 = data.base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN CERTIFICATE-----\n\(base64)\n-----END CERTIFICATE-----\n"
    }

    /// A PEM file's text, checked to be PEM (a DER file would be refused by the server with a
    /// less helpful message).
    static func pem(_ file: String) throws -> String {
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: file)) else {
            throw AdminFailure.local("cannot read \(file)")
        }
        guard data.count <= 64 * 1024 else { throw AdminFailure.local("\(file) is too large for a PEM file") }
        let text = String(decoding: data, as: UTF8.self)
        guard text.contains("-----BEGIN ") else { throw AdminFailure.local("\(file) is not a PEM file") }
        return text
    }
}

/// `storekeeper admin keys …`: API keys. A new key is shown once; the server stores its hash,
/// so a listing shows what each key is (id, kind, how it begins, label, dates), never the key.
enum AdminKeys {
    struct Listed: Decodable {
        var id: String
        var kind: String
        var prefix: String
        var label: String
        var createdAt: Int64
        var revokedAt: Int64?
    }

    static let command = Command(
        name: "keys", summary: "API keys (public and secret keys of an app, admin keys)",
        subcommands: [
            AdminCommands.leaf(
                "list", "list an app's keys (--app) or the admin keys, revoked ones included",
                options: [Option(name: "--app", valueName: "APP", help: "the app (default: the admin keys)")]
            ) { client, arguments in
                let path = arguments.value("--app").map { "/v1/admin/apps/\(AdminClient.segment($0))/keys" }
                struct List: Decodable { var keys: [Listed] }
                try AdminCommands.show(try await client.send("GET", path ?? "/v1/admin/keys"), as: List.self, arguments)
                {
                    var table = TextTable(headers: ["ID", "KIND", "PREFIX", "LABEL", "CREATED", "REVOKED"])
                    for key in $0.keys {
                        table.add([
                            key.id, key.kind, key.prefix, key.label.isEmpty ? "-" : key.label,
                            TextTable.instant(key.createdAt), TextTable.instant(key.revokedAt),
                        ])
                    }
                    return table.text
                }
            },
            AdminCommands.leaf(
                "create", "create a key; printed once",
                options: [
                    Option(
                        name: "--kind", valueName: "KIND", help: "public or secret (with --app), or admin",
                        isRequired: true, choices: ["public", "secret", "admin"]),
                    Option(name: "--app", valueName: "APP", help: "the app, for public and secret keys"),
                    Option(name: "--label", valueName: "TEXT", help: "what the key is for"),
                ]
            ) { client, arguments in
                let kind = try arguments.require("--kind")
                let path: String
                switch (kind, arguments.value("--app")) {
                case ("admin", nil): path = "/v1/admin/keys"
                case ("admin", _): throw UsageError("an admin key belongs to no app: drop --app")
                case (_, let app?): path = "/v1/admin/apps/\(AdminClient.segment(app))/keys"
                case (_, nil): throw UsageError("a \(kind) key needs --app")
                }
                var body: [String: Any] = ["kind": kind]
                if let label = arguments.value("--label") { body["label"] = label }
                struct Created: Decodable {
                    var id: String
                    var appId: String?
                    var kind: String
                    var key: String
                }
                try AdminCommands.show(
                    try await client.send("POST", path, body: try AdminCommands.jsonBody(body)), as: Created.self,
                    arguments
                ) {
                    "\($0.kind) key \($0.id)\($0.appId.map { " for app \($0)" } ?? "") (shown once): \($0.key)"
                }
            },
            AdminCommands.leaf(
                "revoke", "revoke a key", arguments: [Argument(name: "KEY_ID", help: "the key's id (not the key)")]
            ) { client, arguments in
                let id = arguments.positional[0]
                _ = try await client.send("DELETE", "/v1/admin/keys/\(AdminClient.segment(id))")
                // 204 has no body: --json prints an object so scripts always get JSON.
                print(
                    arguments.has("--json")
                        ? String(decoding: try AdminCommands.jsonBody(["revoked": id]), as: UTF8.self)
                        : "revoked key \(id)")
            },
        ])
}
