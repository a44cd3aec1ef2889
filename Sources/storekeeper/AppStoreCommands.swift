import AppStoreClient
import AppStoreModels
import AppStoreTrust
import Dispatch
import Foundation
import Synchronization

/// `storekeeper appstore …`: call the App Store Server API for one app and print Apple's answer
/// as JSON, so an operator can inspect a customer from a shell.
///
/// Signed items are printed as Apple sent them; with `--root` they are also verified and their
/// payloads printed under `verified`.
enum AppStoreCommands {
    static let usage = """
        usage: storekeeper appstore COMMAND [config] [options]
          transaction ID                               Get Transaction Info
          history ID [--revision R] [--all] [--v1] [--product-id P]... [--product-type T]...
                     [--group G]... [--sort ASCENDING|DESCENDING] [--start MS] [--end MS]
                     [--ownership PURCHASED|FAMILY_SHARED] [--revoked true|false]
          statuses ID [--status 1..5]...               Get All Subscription Statuses
          refunds ID [--revision R] [--all]            Get Refund History
          notifications --start MS --end MS [--only-failures] [--transaction-id ID]
                     [--type TYPE [--subtype SUBTYPE]] [--pagination-token T] [--all]
          test-notification [--token TOKEN]            request one, or read its status
        config: --config FILE (JSON: key, keyId, issuerId, bundleId, environment, baseURL,
                sandboxFallback) and/or --key P8 --key-id ID --issuer-id ID --bundle-id ID
                [--environment Production|Sandbox] [--base-url URL] [--sandbox-fallback]
                [--root CERT]... [--app-apple-id N]
        """

    static let switches: Set<String> = ["--all", "--v1", "--only-failures", "--sandbox-fallback"]
    static let configOptions: Set<String> = [
        "--config", "--key", "--key-id", "--issuer-id", "--bundle-id", "--environment", "--base-url", "--root",
        "--app-apple-id",
    ]

    static func run(_ arguments: ArraySlice<String>) throws {
        guard let command = arguments.first, command != "--help" else { throw UsageError(usage) }
        let parsed = try CommandLineArguments(arguments.dropFirst(), switches: switches)
        let settings = try Settings(parsed)
        let client = try settings.makeClient()
        let verifier = try settings.makeVerifier()
        let output: String
        switch command {
        case "transaction":
            try parsed.allowOnly(configOptions)
            let id = try positional(parsed, "transaction ID")
            output = try blocking {
                let response = try await client.getTransactionInfo(transactionId: id)
                return try printed(
                    response, signedTransactions: response.signedTransactionInfo.map { [$0] } ?? [],
                    verifier: verifier)
            }
        case "history":
            try parsed.allowOnly(
                configOptions.union([
                    "--revision", "--product-id", "--product-type", "--group", "--sort", "--start", "--end",
                    "--ownership", "--revoked",
                ]))
            let id = try positional(parsed, "transaction ID")
            let request = try historyRequest(parsed)
            let version: TransactionHistoryVersion = parsed.has("--v1") ? .v1 : .v2
            output = try blocking {
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
            try parsed.allowOnly(configOptions.union(["--status"]))
            let id = try positional(parsed, "transaction ID")
            let statuses = try parsed.values("--status").map { text -> Status in
                guard let raw = Int32(text), let status = Status(rawValue: raw) else {
                    throw UsageError("--status must be 1…5")
                }
                return status
            }
            output = try blocking {
                let response = try await client.getAllSubscriptionStatuses(
                    transactionId: id, status: statuses.isEmpty ? nil : statuses)
                let signed = (response.data ?? []).flatMap { $0.lastTransactions ?? [] }.compactMap(
                    \.signedTransactionInfo)
                return try printed(response, signedTransactions: signed, verifier: verifier)
            }
        case "refunds":
            try parsed.allowOnly(configOptions.union(["--revision"]))
            let id = try positional(parsed, "transaction ID")
            output = try blocking {
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
            try parsed.allowOnly(
                configOptions.union([
                    "--start", "--end", "--transaction-id", "--type", "--subtype", "--pagination-token",
                ]))
            let request = NotificationHistoryRequest(
                startDate: try timestamp(parsed, "--start", required: true),
                endDate: try timestamp(parsed, "--end", required: true),
                notificationType: parsed.value("--type").map { RawEnum(rawValue: $0) },
                notificationSubtype: parsed.value("--subtype").map { RawEnum(rawValue: $0) },
                transactionId: parsed.value("--transaction-id"),
                onlyFailures: parsed.has("--only-failures") ? true : nil)
            output = try blocking {
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
            try parsed.allowOnly(configOptions.union(["--token"]))
            output = try blocking {
                if let token = parsed.value("--token") {
                    return Output.json(try await client.getTestNotificationStatus(testNotificationToken: token))
                }
                return Output.json(try await client.requestTestNotification())
            }
        default:
            throw UsageError("unknown appstore command \(command)\n\n\(usage)")
        }
        print(output)
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
        guard let value = arguments.positional.first else { throw UsageError("missing \(name)\n\n\(usage)") }
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

    /// Runs async work from the synchronous CLI entry point.
    ///
    /// The work runs in a detached task on the global concurrent executor while this (main)
    /// thread waits on a semaphore. That is safe here because the main thread is not one of the
    /// cooperative pool's threads and nothing in the work needs the main actor; it must never be
    /// called from async code, where the wait would block a pool thread.
    static func blocking(_ work: @escaping @Sendable () async throws -> String) throws -> String {
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do {
                outcome.set(.success(try await work()))
            } catch {
                outcome.set(.failure(error))
            }
            done.signal()
        }
        done.wait()
        return try outcome.get()
    }

    /// The result handed from the detached task to the waiting thread.
    /// - Note: Thread-safe: the result sits behind a `Mutex`; the semaphore orders set before get.
    final class Outcome: Sendable {
        private let value = Mutex<Result<String, any Error>?>(nil)
        func set(_ result: Result<String, any Error>) { value.withLock { $0 = result } }
        func get() throws -> String {
            guard let result = value.withLock({ $0 }) else { throw UsageError("no result") }
            return try result.get()
        }
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
                    throw UsageError("missing \(flag) (or its field in --config)\n\n\(AppStoreCommands.usage)")
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
