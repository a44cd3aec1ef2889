import AppStoreClient
import AppStoreModels
import AppStoreTrust
import Foundation

/// `storekeeper appstore …`: call the App Store Server API for one app and print Apple's answer
/// as JSON, so an operator can inspect a customer from a shell.
///
/// Signed items are printed as Apple sent them; with `--root` they are also verified and their
/// payloads printed under `verified`.
enum AppStoreCommands {
    /// The client settings every subcommand takes (flags override `--config`).
    static let configOptions: [Option] = [
        Option(
            name: "--config", valueName: "FILE",
            help: "JSON: key, keyId, issuerId, bundleId, environment, baseURL, sandboxFallback, roots, appAppleId"),
        Option(name: "--key", valueName: "P8", help: "the In-App Purchase key file (or key in --config)"),
        Option(name: "--key-id", valueName: "ID", help: "the key's ID (or keyId in --config)"),
        Option(name: "--issuer-id", valueName: "ID", help: "the issuer ID (or issuerId in --config)"),
        Option(name: "--bundle-id", valueName: "ID", help: "the app's bundle ID (or bundleId in --config)"),
        Option(name: "--environment", valueName: "ENV", help: "Production|Sandbox (default: Production)"),
        Option(name: "--base-url", valueName: "URL", help: "another Server API (the simulator)"),
        Option(
            name: "--root", valueName: "CERT",
            help: "verify signed items against this root; prints them under verified",
            isRepeatable: true),
        Option(name: "--app-apple-id", valueName: "N", help: "the app's Apple ID, for verification"),
    ]
    static let configFlags = [Flag(name: "--sandbox-fallback", help: "retry in Sandbox when Production answers 404")]
    static let transactionArgument = Argument(name: "ID", help: "a transaction ID of the customer")

    static func subcommand(
        _ name: String, _ summary: String, arguments: [Argument] = [transactionArgument], options: [Option] = [],
        flags: [Flag] = []
    ) -> Command {
        Command(
            name: name, summary: summary, arguments: arguments, options: options + configOptions,
            flags: flags + configFlags, action: { try await run(name, $0) })
    }

    static let command: Command = Command(
        name: "appstore", summary: "call the App Store Server API for one app and print Apple's answer as JSON",
        subcommands: [
            subcommand("transaction", "Get Transaction Info"),
            subcommand(
                "history", "Get Transaction History",
                options: [
                    Option(name: "--revision", valueName: "R", help: "start after this revision"),
                    Option(name: "--product-id", valueName: "P", help: "only this product", isRepeatable: true),
                    Option(
                        name: "--product-type", valueName: "T",
                        help: "AUTO_RENEWABLE, NON_RENEWABLE, CONSUMABLE or NON_CONSUMABLE", isRepeatable: true),
                    Option(name: "--group", valueName: "G", help: "only this subscription group", isRepeatable: true),
                    Option(name: "--sort", valueName: "ORDER", help: "ASCENDING|DESCENDING"),
                    Option(name: "--start", valueName: "MS", help: "from (epoch milliseconds)"),
                    Option(name: "--end", valueName: "MS", help: "until (epoch milliseconds)"),
                    Option(name: "--ownership", valueName: "TYPE", help: "PURCHASED|FAMILY_SHARED"),
                    Option(name: "--revoked", valueName: "BOOL", help: "true|false"),
                ],
                flags: [
                    Flag(name: "--all", help: "follow every page"),
                    Flag(name: "--v1", help: "the deprecated v1 endpoint"),
                ]),
            subcommand(
                "statuses", "Get All Subscription Statuses",
                options: [Option(name: "--status", valueName: "1..5", help: "only this status", isRepeatable: true)]),
            subcommand(
                "refunds", "Get Refund History",
                options: [Option(name: "--revision", valueName: "R", help: "start after this revision")],
                flags: [Flag(name: "--all", help: "follow every page")]),
            subcommand(
                "notifications", "Get Notification History", arguments: [],
                options: [
                    Option(name: "--start", valueName: "MS", help: "from (epoch milliseconds)", isRequired: true),
                    Option(name: "--end", valueName: "MS", help: "until (epoch milliseconds)", isRequired: true),
                    Option(name: "--transaction-id", valueName: "ID", help: "only this customer's"),
                    Option(name: "--type", valueName: "TYPE", help: "only this notification type"),
                    Option(name: "--subtype", valueName: "SUBTYPE", help: "only this subtype (with --type)"),
                    Option(name: "--pagination-token", valueName: "T", help: "continue from this page"),
                ],
                flags: [
                    Flag(name: "--only-failures", help: "only notifications that did not reach the server"),
                    Flag(name: "--all", help: "follow every page"),
                ]),
            subcommand(
                "test-notification", "request a test notification, or read its status with --token", arguments: [],
                options: [Option(name: "--token", valueName: "TOKEN", help: "the test notification token")]),
        ])

    static func run(_ command: String, _ parsed: CommandLineArguments) async throws -> Int32 {
        let settings = try Settings(parsed)
        let client = try settings.makeClient()
        let verifier = try settings.makeVerifier()
        let output: String
        switch command {
        case "transaction":
            let id = try positional(parsed, "transaction ID")
            output = try await answer {
                let response = try await client.getTransactionInfo(transactionId: id)
                return try printed(
                    response, signedTransactions: response.signedTransactionInfo.map { [$0] } ?? [],
                    verifier: verifier)
            }
        case "history":
            let id = try positional(parsed, "transaction ID")
            let request = try historyRequest(parsed)
            let version: TransactionHistoryVersion = parsed.has("--v1") ? .v1 : .v2
            output = try await answer {
                var pages: [HistoryResponse] = []
                var revision = parsed.value("--revision")
                repeat {
                    let page = try await client.getTransactionHistory(
                        transactionId: id, revision: revision, request: request, version: version)
                    pages.append(page)
                    revision = page.revision
                    guard parsed.has("--all"), page.hasMore == true, revision != nil else { break }
                } while true
                let signed = pages.flatMap { $0.signedTransactions ?? [] }
                return try printed(pages, signedTransactions: signed, verifier: verifier)
            }
        case "statuses":
            let id = try positional(parsed, "transaction ID")
            let statuses = try parsed.values("--status").map { text -> Status in
                guard let raw = Int32(text), let status = Status(rawValue: raw) else {
                    throw UsageError("--status must be 1…5")
                }
                return status
            }
            output = try await answer {
                let response = try await client.getAllSubscriptionStatuses(
                    transactionId: id, status: statuses.isEmpty ? nil : statuses)
                let signed = (response.data ?? []).flatMap { $0.lastTransactions ?? [] }.compactMap(
                    \.signedTransactionInfo)
                return try printed(response, signedTransactions: signed, verifier: verifier)
            }
        case "refunds":
            let id = try positional(parsed, "transaction ID")
            output = try await answer {
                var pages: [RefundHistoryResponse] = []
                var revision = parsed.value("--revision")
                repeat {
                    let page = try await client.getRefundHistory(transactionId: id, revision: revision)
                    pages.append(page)
                    revision = page.revision
                    guard parsed.has("--all"), page.hasMore == true, revision != nil else { break }
                } while true
                let signed = pages.flatMap { $0.signedTransactions ?? [] }
                return try printed(pages, signedTransactions: signed, verifier: verifier)
            }
        case "notifications":
            let request = NotificationHistoryRequest(
                startDate: try timestamp(parsed, "--start", required: true),
                endDate: try timestamp(parsed, "--end", required: true),
                notificationType: parsed.value("--type").map { RawEnum(rawValue: $0) },
                notificationSubtype: parsed.value("--subtype").map { RawEnum(rawValue: $0) },
                transactionId: parsed.value("--transaction-id"),
                onlyFailures: parsed.has("--only-failures") ? true : nil)
            output = try await answer {
                var pages: [NotificationHistoryResponse] = []
                var token = parsed.value("--pagination-token")
                repeat {
                    let page = try await client.getNotificationHistory(paginationToken: token, request: request)
                    pages.append(page)
                    token = page.paginationToken
                    guard parsed.has("--all"), page.hasMore == true, token != nil else { break }
                } while true
                let signed = pages.flatMap { $0.notificationHistory ?? [] }.compactMap(\.signedPayload)
                return Output.json(
                    Printed(
                        response: pages,
                        verified: try verifier.map { verifier in
                            try signed.map { try verifier.verifyAndDecodeNotification($0).payload }
                        }))
            }
        case "test-notification":
            output = try await answer {
                if let token = parsed.value("--token") {
                    return Output.json(try await client.getTestNotificationStatus(testNotificationToken: token))
                }
                return Output.json(try await client.requestTestNotification())
            }
        default:
            throw UsageError("unknown appstore command \(command)")
        }
        print(output)
        return 0
    }

    /// The printed answer of one call (keeps each case's work in one closure).
    private static func answer(_ work: () async throws -> String) async throws -> String {
        try await work()
    }

    /// Apple's answer, and the verified payloads of its signed items when `--root` was given.
    struct Printed<Response: Encodable, Payload: Encodable>: Encodable {
        let response: Response
        let verified: [Payload]?
    }

    /// Apple's answer as JSON, with its signed transactions verified and decoded when a
    /// verifier (`--root`) was given.
    static func printed<Response: Encodable>(
        _ response: Response, signedTransactions: [String], verifier: SignedDataVerifier?
    ) throws -> String {
        Output.json(
            Printed(
                response: response,
                verified: try verifier.map { verifier in
                    try signedTransactions.map { try verifier.verifyAndDecodeTransaction($0).payload }
                }))
    }

    static func positional(_ arguments: CommandLineArguments, _ name: String) throws(UsageError) -> String {
        guard let value = arguments.positional.first else { throw UsageError("missing \(name)") }
        return value
    }

    static func timestamp(_ arguments: CommandLineArguments, _ name: String, required: Bool = false) throws(UsageError)
        -> Timestamp?
    {
        guard let text = arguments.value(name) else {
            if required { throw UsageError("missing \(name) (epoch milliseconds)") }
            return nil
        }
        guard let milliseconds = Int64(text) else { throw UsageError("\(name) must be epoch milliseconds") }
        return Timestamp(millisecondsSince1970: milliseconds)
    }

    static func historyRequest(_ arguments: CommandLineArguments) throws(UsageError) -> TransactionHistoryRequest {
        var request = TransactionHistoryRequest()
        request.startDate = try timestamp(arguments, "--start")
        request.endDate = try timestamp(arguments, "--end")
        request.productIds = arguments.values("--product-id").nilIfEmpty
        var types: [TransactionHistoryRequest.ProductType] = []
        for text in arguments.values("--product-type") {
            guard let type = TransactionHistoryRequest.ProductType(rawValue: text) else {
                throw UsageError("--product-type must be AUTO_RENEWABLE, NON_RENEWABLE, CONSUMABLE or NON_CONSUMABLE")
            }
            types.append(type)
        }
        request.productTypes = types.nilIfEmpty
        if let text = arguments.value("--sort") {
            guard let sort = TransactionHistoryRequest.Order(rawValue: text) else {
                throw UsageError("--sort must be ASCENDING or DESCENDING")
            }
            request.sort = sort
        }
        request.subscriptionGroupIdentifiers = arguments.values("--group").nilIfEmpty
        if let text = arguments.value("--ownership") {
            guard let ownership = InAppOwnershipType(rawValue: text) else {
                throw UsageError("--ownership must be PURCHASED or FAMILY_SHARED")
            }
            request.inAppOwnershipType = ownership
        }
        if let text = arguments.value("--revoked") {
            guard let revoked = Bool(text) else { throw UsageError("--revoked must be true or false") }
            request.revoked = revoked
        }
        return request
    }

    /// Client settings from `--config FILE` with flags overriding it.
    struct Settings {
        struct File: Decodable {
            var key: String?
            var keyId: String?
            var issuerId: String?
            var bundleId: String?
            var environment: String?
            var baseURL: String?
            var sandboxFallback: Bool?
            var roots: [String]?
            var appAppleId: Int64?
        }

        var keyPath: String
        var keyId: String
        var issuerId: String
        var bundleId: String
        var environment: AppStoreEnvironment
        var baseURL: URL?
        var sandboxFallback: Bool
        var roots: [String]
        var appAppleId: Int64?

        init(_ arguments: CommandLineArguments) throws {
            var file = File()
            if let path = arguments.value("--config") {
                do {
                    file = try JSONDecoder().decode(File.self, from: try Input.read(path))
                } catch let error as DecodingError {
                    throw UsageError("--config \(path): not a valid config JSON (\(error))")
                }
            }
            func pick(_ flag: String, _ fromFile: String?) throws(UsageError) -> String {
                guard let value = arguments.value(flag) ?? fromFile else {
                    throw UsageError("missing \(flag) (or its field in --config)")
                }
                return value
            }
            keyPath = try pick("--key", file.key)
            keyId = try pick("--key-id", file.keyId)
            issuerId = try pick("--issuer-id", file.issuerId)
            bundleId = try pick("--bundle-id", file.bundleId)
            let environmentName = arguments.value("--environment") ?? file.environment ?? "Production"
            guard let environment = AppStoreEnvironment(rawValue: environmentName) else {
                throw UsageError("unknown environment \(environmentName): Production or Sandbox")
            }
            self.environment = environment
            if let text = arguments.value("--base-url") ?? file.baseURL {
                guard let url = URL(string: text), url.scheme == "https" || url.scheme == "http" else {
                    throw UsageError("--base-url must be an http(s) URL")
                }
                baseURL = url
            }
            sandboxFallback = arguments.has("--sandbox-fallback") || (file.sandboxFallback ?? false)
            roots = arguments.values("--root").isEmpty ? (file.roots ?? []) : arguments.values("--root")
            if let text = arguments.value("--app-apple-id") {
                guard let number = Int64(text) else { throw UsageError("--app-apple-id must be a number") }
                appAppleId = number
            } else {
                appAppleId = file.appAppleId
            }
        }

        func makeClient() throws -> AppStoreServerAPIClient {
            let key = try PrivateKey(contentsOf: URL(fileURLWithPath: keyPath))
            let configuration = try AppStoreServerAPIConfiguration(
                bundleId: bundleId, keyId: keyId, issuerId: issuerId, environment: environment, baseURL: baseURL,
                enableSandboxFallback: sandboxFallback)
            return try AppStoreServerAPIClient(configuration: configuration, signingKey: key)
        }

        /// A verifier when roots were given; the CLI prints unverified data otherwise.
        func makeVerifier() throws -> SignedDataVerifier? {
            guard !roots.isEmpty else { return nil }
            return try SignedDataVerifier(
                rootCertificates: try TrustCommands.loadRoots(roots), bundleId: bundleId, appAppleId: appAppleId,
                environment: environment)
        }
    }
}

extension Array {
    fileprivate var nilIfEmpty: [Element]? { isEmpty ? nil : self }
}
