import AppStoreModels
import Foundation
import SecretSealing
import Storage

/// Everything `storekeeper serve` needs to start: where to listen, which database, the admin
/// key, the secrets key, HTTP limits, and the settings of the workers (webhook delivery, access
/// scheduler, jobs, history replay, status polling, on-demand sync, App Store rate share).
///
/// Every key can come from three places; later ones win: the built-in default, a JSON config
/// file (`{"listen": "127.0.0.1:8080", "databaseURL": "…", …}`), an environment variable named
/// `STOREKEEPER_` plus the key in upper snake case (`STOREKEEPER_DATABASE_URL`,
/// `STOREKEEPER_MAX_BODY_SIZE`), and finally command-line overrides. Unknown keys in the file
/// are refused, so a typo cannot silently leave a default in place. `load` stops at the first
/// problem; `check` (`storekeeper config check`) reads the same way and lists them all.
/// - Note: Immutable value; `Sendable`.
public struct ServerConfiguration: Sendable, Hashable {
    /// `HOST:PORT` (IPv6 as `[::1]:8080`).
    public var listen: String
    /// A file path, `sqlite:` URL or `postgres://` URL; defaults to a SQLite file in `dataDirectory`.
    public var databaseURL: String?
    public var dataDirectory: String
    /// The bootstrap admin key (compared by SHA-256 in constant time); `nil` disables it, leaving
    /// only admin keys stored in the database.
    public var adminKey: String?
    public var maxBodySize: Int
    public var maxHeaderSize: Int
    /// Most open connections; near it, new clients get in by closing the oldest idle
    /// keep-alive connections (`HTTPServer.Configuration.connectionLimit`).
    public var connectionLimit: Int
    public var connectionTimeoutSeconds: Int
    /// A request head (request line and headers) must be complete within this many seconds of
    /// the connection opening, or of the previous response on a kept-alive connection.
    public var requestHeadTimeoutSeconds: Int
    /// After a first `requestHeadTimeoutSeconds`, a body must keep up this average rate; 0: no minimum.
    public var minBodyBytesPerSecond: Int
    /// Most connections from one client IP address; 0: no limit.
    public var maxConnectionsPerAddress: Int
    public var threadPoolSize: Int
    public var shutdownGraceSeconds: Int
    /// Structured JSON access log lines on standard error.
    public var accessLog: Bool
    /// Run the webhook delivery worker in this process.
    public var webhookWorker: Bool
    /// How long the webhook worker waits, when no delivery finishes, before looking for new
    /// events: the bound on how long a committed event waits to be picked up.
    public var webhookPollMilliseconds: Int
    /// A delivery still failing this long after its event was created is dead-lettered.
    public var webhookMaxAgeSeconds: Int
    public var webhookTimeoutSeconds: Int
    /// How long a worker's claim on a customer's webhook queue lasts without renewal (renewed
    /// while it sends; the time before another instance takes over after a crash). At least
    /// 3 × `webhookTimeoutSeconds` + 3, so a delivery always ends before its lease can.
    public var webhookLeaseSeconds: Int
    /// The most deliveries of one customer's queue claimed under one lease.
    public var webhookBatchSize: Int
    /// Exceptions to the webhook destination policy, which refuses loopback, link-local,
    /// private and other special-purpose addresses: CIDR ranges and host names, for
    /// development (`127.0.0.1/32` for a listener on this machine). Empty by default.
    public var webhookAllowedDestinations: WebhookDestinationAllowList
    /// How long a cached app configuration is used before its row is checked again: the bound
    /// within which a change made through another instance on the same database takes effect.
    public var appRefreshMilliseconds: Int
    /// The key that seals secrets at rest, as base64 or hex of 32 bytes
    /// (`STOREKEEPER_SECRETS_KEY`); or `secretsKeyFile`, a file holding it (mode 0600).
    public var secretsKey: String?
    public var secretsKeyFile: String?
    /// Run the access scheduler in this process: customers are re-evaluated at the instants their
    /// access changes by time alone (expiry, grace period end), and the events committed then.
    public var accessScheduler: Bool
    /// How often the access scheduler looks for due instants: its resolution.
    public var accessSchedulerPollMilliseconds: Int
    /// Run the job worker (purchase completions) in this process.
    public var jobWorker: Bool
    /// How long a posted signed transaction waits for the App Store Server API before it is
    /// answered from the verified transaction alone (`"completion": "pending"`) and completed
    /// by a job; 0 completes every purchase in the background.
    public var purchaseCompletionWaitMilliseconds: Int
    /// Run the notification history replay worker in this process (docs/recovery.md).
    public var historyReplay = true
    /// How often each app's history is replayed from its cursor.
    public var historyReplayIntervalSeconds = 3600
    /// How far before the cursor a replay starts.
    public var historyReplayOverlapSeconds = 3600
    /// Ask Apple only for the notifications it failed to deliver.
    public var historyReplayOnlyFailures = false
    /// How long a replay holds its cursor without extending the lease (after every page): what
    /// another instance waits, at most, after a server died mid-replay.
    public var historyReplayLeaseSeconds = 900
    /// How long a claimed job stays leased: what another instance waits, at most, after a server
    /// died mid-job. Longer than a job may run.
    public var jobLeaseSeconds = 300
    /// Run the status polling worker in this process.
    public var statusPolling = true
    /// How often the polling worker looks for subscriptions due for a poll.
    public var statusPollingIntervalSeconds = 60
    /// A subscription past its expiry with no fact since is polled this long after the expiry:
    /// the bound on how long a lost expiry or renewal notification goes unseen.
    public var statusPollingExpiryDelaySeconds = 3600
    /// A subscription in billing retry is polled this often.
    public var statusPollingBillingRetrySeconds = 86_400
    /// An active subscription with no fact for this long is polled.
    public var statusPollingStaleSeconds = 7 * 86_400
    /// How long a claimed batch of polls stays leased: what another instance waits, at most,
    /// after a server died mid-batch. A claim takes what the app's rate can poll in half of it.
    public var statusPollingLeaseSeconds = 300
    /// Run the Google Play voided-purchases polling worker in this process (docs/recovery.md).
    public var playVoidedPolling = true
    /// How often each app's voided purchases are listed from its cursor.
    public var playVoidedPollingIntervalSeconds = 3600
    /// How far before the cursor a voided-purchases run starts.
    public var playVoidedPollingOverlapSeconds = 3600
    /// Run the Google Play subscription re-read worker in this process.
    public var playReread = true
    /// How often the re-read worker looks for subscription tokens due for a re-read.
    public var playRereadIntervalSeconds = 60
    /// A Play subscription read with access is re-read this long after its expiry when nothing
    /// was read since: the bound on how long a lost renewal, hold or expiry push goes unseen.
    public var playRereadExpiryDelaySeconds = 3600
    /// A Play subscription in grace, on hold or paused is re-read this often while nothing is read.
    public var playRereadPendingSeconds = 86_400
    /// How long a claimed batch of Play re-reads stays leased: what another instance waits, at
    /// most, after a server died mid-batch; what is unread at three quarters of it is given back.
    public var playRereadLeaseSeconds = 300
    /// Voided purchases asked for per page of `voidedpurchases.list` (Google's maximum, 1000, by
    /// default); each page is committed, and the window's place saved, before the next.
    public var playVoidedPollingPageSize = 1000
    /// One customer may be synced on demand at most once per this many seconds (0: no limit).
    public var customerSyncIntervalSeconds = 60
    /// The percentage of Apple's documented per-app rate limits this process may use (lower it
    /// to 100/n when n instances serve the same apps).
    public var appStoreRatePercent = 100
    /// Mark the dashboard's cookies `Secure` (only sent over HTTPS): set it when the server is
    /// reached through TLS (a proxy in front, docs/nginx.md).
    public var dashboardSecureCookies = false
    /// How long a dashboard sign-in lasts.
    public var dashboardSessionSeconds = 8 * 3600
    /// The Play Developer API's base URL: Google's by default; the Play simulator's for tests
    /// and the demo (docs/googleplay.md).
    public var playApiBaseURL: String?
    /// Where the keys that sign Google Play push tokens are read: a URL (Google's certificates
    /// by default) or a JWKS file.
    public var playPushKeySet: String?
    /// SQLite only, for diagnosing: a file to which SQLite's timing of every statement run is
    /// written, added up by statement, when the server stops (`SQLiteStatementProfile`).
    public var sqliteStatementProfile: String?

    public init(
        listen: String = "127.0.0.1:8080", databaseURL: String? = nil, dataDirectory: String = "data",
        adminKey: String? = nil, maxBodySize: Int = 1 << 20, maxHeaderSize: Int = 16 * 1024,
        connectionLimit: Int = 1000, connectionTimeoutSeconds: Int = 30, requestHeadTimeoutSeconds: Int = 10,
        minBodyBytesPerSecond: Int = 1024, maxConnectionsPerAddress: Int = 256,
        threadPoolSize: Int = max(2, ProcessInfo.processInfo.activeProcessorCount), shutdownGraceSeconds: Int = 10,
        accessLog: Bool = true, webhookWorker: Bool = true, webhookPollMilliseconds: Int = 250,
        webhookMaxAgeSeconds: Int = 3 * 86_400, webhookTimeoutSeconds: Int = 10, appRefreshMilliseconds: Int = 1000,
        webhookAllowedDestinations: WebhookDestinationAllowList = .none,
        secretsKey: String? = nil, secretsKeyFile: String? = nil,
        accessScheduler: Bool = true, accessSchedulerPollMilliseconds: Int = 2000,
        jobWorker: Bool = true, purchaseCompletionWaitMilliseconds: Int = 2000, webhookLeaseSeconds: Int = 60,
        webhookBatchSize: Int = 16
    ) {
        self.listen = listen
        self.databaseURL = databaseURL
        self.dataDirectory = dataDirectory
        self.adminKey = adminKey
        self.maxBodySize = maxBodySize
        self.maxHeaderSize = maxHeaderSize
        self.connectionLimit = connectionLimit
        self.connectionTimeoutSeconds = connectionTimeoutSeconds
        self.requestHeadTimeoutSeconds = requestHeadTimeoutSeconds
        self.minBodyBytesPerSecond = minBodyBytesPerSecond
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
        self.threadPoolSize = threadPoolSize
        self.shutdownGraceSeconds = shutdownGraceSeconds
        self.accessLog = accessLog
        self.webhookWorker = webhookWorker
        self.webhookPollMilliseconds = webhookPollMilliseconds
        self.webhookMaxAgeSeconds = webhookMaxAgeSeconds
        self.webhookTimeoutSeconds = webhookTimeoutSeconds
        self.appRefreshMilliseconds = appRefreshMilliseconds
        self.secretsKey = secretsKey
        self.secretsKeyFile = secretsKeyFile
        self.webhookAllowedDestinations = webhookAllowedDestinations
        self.accessScheduler = accessScheduler
        self.accessSchedulerPollMilliseconds = accessSchedulerPollMilliseconds
        self.jobWorker = jobWorker
        self.purchaseCompletionWaitMilliseconds = purchaseCompletionWaitMilliseconds
        self.webhookLeaseSeconds = webhookLeaseSeconds
        self.webhookBatchSize = webhookBatchSize
    }

    /// Every configuration key, as written in the JSON file.
    public static let keys: [String] = [
        "listen", "databaseURL", "dataDirectory", "adminKey", "maxBodySize", "maxHeaderSize", "connectionLimit",
        "connectionTimeoutSeconds", "threadPoolSize", "shutdownGraceSeconds", "accessLog", "webhookWorker",
        "webhookPollMilliseconds", "webhookMaxAgeSeconds", "webhookTimeoutSeconds", "appRefreshMilliseconds",
        "requestHeadTimeoutSeconds", "minBodyBytesPerSecond", "maxConnectionsPerAddress", "secretsKey",
        "secretsKeyFile", "webhookAllowedDestinations", "accessScheduler", "accessSchedulerPollMilliseconds",
        "jobWorker",
        "purchaseCompletionWaitMilliseconds", "webhookLeaseSeconds", "webhookBatchSize",
        "historyReplay", "historyReplayIntervalSeconds", "historyReplayOverlapSeconds", "historyReplayOnlyFailures",
        "historyReplayLeaseSeconds", "jobLeaseSeconds",
        "statusPolling", "statusPollingIntervalSeconds", "statusPollingExpiryDelaySeconds",
        "statusPollingBillingRetrySeconds", "statusPollingStaleSeconds", "statusPollingLeaseSeconds",
        "customerSyncIntervalSeconds",
        "appStoreRatePercent", "dashboardSecureCookies", "dashboardSessionSeconds", "playApiBaseURL",
        "playPushKeySet", "playVoidedPolling", "playVoidedPollingIntervalSeconds", "playVoidedPollingOverlapSeconds",
        "playReread", "playRereadIntervalSeconds", "playRereadExpiryDelaySeconds", "playRereadPendingSeconds",
        "playRereadLeaseSeconds", "playVoidedPollingPageSize", "sqliteStatementProfile",
    ]

    /// `databaseURL` → `STOREKEEPER_DATABASE_URL`.
    public static func environmentVariable(for key: String) -> String {
        var name = "STOREKEEPER_"
        var previousWasLower = false
        for character in key {
            if character.isUppercase && previousWasLower { name += "_" }
            name += character.uppercased()
            previousWasLower = character.isLowercase || character.isNumber
        }
        return name
    }

    /// Defaults, then `file` (JSON), then `environment` variables, then `overrides` (same keys).
    /// Throws the first problem; `check` lists them all.
    public static func load(
        file: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment,
        overrides: [String: String] = [:]
    ) throws(ServerConfigurationError) -> ServerConfiguration {
        var problems = ConfigurationProblems(stopAtFirst: true)
        let configuration = try assemble(
            file: file, environment: environment, overrides: overrides, problems: &problems)
        try configuration.validate()
        return configuration
    }

    /// The reading `load` and `check` share: each value from its source, later sources winning;
    /// a problem is thrown or, when `problems` collects, recorded and that value skipped.
    static func assemble(
        file: String?, environment: [String: String], overrides: [String: String],
        problems: inout ConfigurationProblems
    ) throws(ServerConfigurationError) -> ServerConfiguration {
        var configuration = ServerConfiguration()
        func apply(_ key: String, _ value: String, source: String, problems: inout ConfigurationProblems)
            throws(ServerConfigurationError)
        {
            do {
                try configuration.set(key, value, source: source)
                problems.sources[key] = source
            } catch {
                try problems.report(error)
            }
        }
        if let file {
            for (key, value) in try fileValues(file, problems: &problems) {
                switch value {
                case .success(let value): try apply(key, value, source: file, problems: &problems)
                case .failure(let problem): try problems.report(problem)
                }
            }
        }
        for key in keys {
            let variable = environmentVariable(for: key)
            if let value = environment[variable], !value.isEmpty {
                try apply(key, value, source: variable, problems: &problems)
            }
        }
        for (key, value) in overrides.sorted(by: { $0.key < $1.key }) {
            guard keys.contains(key) else {
                try problems.report(
                    ServerConfigurationError(code: "config.unknownKey", message: "unknown key \(key)"))
                continue
            }
            try apply(key, value, source: "--\(key)", problems: &problems)
        }
        return configuration
    }

    /// The file's keys in order, each with its value as text or why it cannot be used; a file
    /// that cannot be read at all is reported here.
    private static func fileValues(_ file: String, problems: inout ConfigurationProblems)
        throws(ServerConfigurationError) -> [(String, Result<String, ServerConfigurationError>)]
    {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: file))
        } catch {
            try problems.report(ServerConfigurationError(code: "config.fileUnreadable", message: "cannot read \(file)"))
            return []
        }
        guard let object = try? AppStoreJSON.decode([String: JSONValue].self, from: data) else {
            try problems.report(
                ServerConfigurationError(code: "config.fileNotJSON", message: "\(file) is not a JSON object"))
            return []
        }
        return object.keys.sorted().map { key in
            guard keys.contains(key) else {
                return (
                    key,
                    .failure(
                        ServerConfigurationError(code: "config.unknownKey", message: "unknown key \(key) in \(file)"))
                )
            }
            switch object[key]! {
            case .string(let string): return (key, .success(string))
            case .integer(let number): return (key, .success(String(number)))
            case .bool(let flag): return (key, .success(flag ? "true" : "false"))
            // A list (webhookAllowedDestinations) may be written as an array of strings.
            case .array(let items) where items.allSatisfy({ if case .string = $0 { true } else { false } }):
                return (
                    key,
                    .success(
                        items.compactMap { if case .string(let item) = $0 { item } else { nil } }.joined(separator: ",")
                    )
                )
            default:
                return (
                    key,
                    .failure(
                        ServerConfigurationError(
                            code: "config.invalidValue",
                            message: "\(key) in \(file) must be a string, integer, boolean or array of strings"))
                )
            }
        }
    }

    mutating func set(_ key: String, _ value: String, source: String) throws(ServerConfigurationError) {
        func integer(_ range: ClosedRange<Int>) throws(ServerConfigurationError) -> Int {
            guard let number = Int(value), range.contains(number) else {
                throw ServerConfigurationError(
                    code: "config.invalidValue",
                    message: "\(key) from \(source) must be an integer in \(range.lowerBound)...\(range.upperBound)")
            }
            return number
        }
        func boolean() throws(ServerConfigurationError) -> Bool {
            switch value.lowercased() {
            case "1", "true", "yes", "on": return true
            case "0", "false", "no", "off": return false
            default:
                throw ServerConfigurationError(
                    code: "config.invalidValue", message: "\(key) from \(source) must be true or false")
            }
        }
        switch key {
        case "listen": listen = value
        case "databaseURL": databaseURL = value
        case "dataDirectory": dataDirectory = value
        case "adminKey": adminKey = value
        case "maxBodySize": maxBodySize = try integer(1...(256 << 20))
        case "maxHeaderSize": maxHeaderSize = try integer(1024...(1 << 20))
        case "connectionLimit": connectionLimit = try integer(1...1_000_000)
        case "connectionTimeoutSeconds": connectionTimeoutSeconds = try integer(1...86_400)
        case "requestHeadTimeoutSeconds": requestHeadTimeoutSeconds = try integer(1...3600)
        case "minBodyBytesPerSecond": minBodyBytesPerSecond = try integer(0...(1 << 30))
        case "maxConnectionsPerAddress": maxConnectionsPerAddress = try integer(0...1_000_000)
        case "threadPoolSize": threadPoolSize = try integer(1...1024)
        case "shutdownGraceSeconds": shutdownGraceSeconds = try integer(0...3600)
        case "accessLog": accessLog = try boolean()
        case "webhookWorker": webhookWorker = try boolean()
        case "webhookPollMilliseconds": webhookPollMilliseconds = try integer(10...3_600_000)
        case "webhookMaxAgeSeconds": webhookMaxAgeSeconds = try integer(60...(30 * 86_400))
        case "webhookTimeoutSeconds": webhookTimeoutSeconds = try integer(1...300)
        case "appRefreshMilliseconds": appRefreshMilliseconds = try integer(0...600_000)
        case "secretsKey":
            do {
                _ = try SecretsKey(encoded: value, source: "secretsKey from \(source)")
            } catch {
                throw ServerConfigurationError(code: "config.invalidValue", message: error.message)
            }
            secretsKey = value
        case "secretsKeyFile": secretsKeyFile = value
        case "webhookAllowedDestinations":
            do {
                webhookAllowedDestinations = try WebhookDestinationAllowList(parsing: value)
            } catch {
                throw ServerConfigurationError(
                    code: "config.invalidValue",
                    message: "\(key) from \(source): \(error) (comma-separated CIDR ranges, addresses or host names)")
            }
        case "accessScheduler": accessScheduler = try boolean()
        case "accessSchedulerPollMilliseconds": accessSchedulerPollMilliseconds = try integer(10...3_600_000)
        case "jobWorker": jobWorker = try boolean()
        case "purchaseCompletionWaitMilliseconds": purchaseCompletionWaitMilliseconds = try integer(0...30_000)
        case "webhookLeaseSeconds": webhookLeaseSeconds = try integer(6...86_400)
        case "webhookBatchSize": webhookBatchSize = try integer(1...1000)
        case "historyReplay": historyReplay = try boolean()
        case "historyReplayIntervalSeconds": historyReplayIntervalSeconds = try integer(60...(7 * 86_400))
        case "historyReplayOverlapSeconds": historyReplayOverlapSeconds = try integer(0...(7 * 86_400))
        case "historyReplayOnlyFailures": historyReplayOnlyFailures = try boolean()
        case "historyReplayLeaseSeconds": historyReplayLeaseSeconds = try integer(1...86_400)
        case "jobLeaseSeconds": jobLeaseSeconds = try integer(1...86_400)
        case "statusPolling": statusPolling = try boolean()
        case "statusPollingIntervalSeconds": statusPollingIntervalSeconds = try integer(1...86_400)
        case "statusPollingExpiryDelaySeconds": statusPollingExpiryDelaySeconds = try integer(0...(30 * 86_400))
        case "statusPollingBillingRetrySeconds": statusPollingBillingRetrySeconds = try integer(60...(30 * 86_400))
        case "statusPollingStaleSeconds": statusPollingStaleSeconds = try integer(3600...(365 * 86_400))
        case "statusPollingLeaseSeconds": statusPollingLeaseSeconds = try integer(2...86_400)
        case "customerSyncIntervalSeconds": customerSyncIntervalSeconds = try integer(0...86_400)
        case "playVoidedPolling": playVoidedPolling = try boolean()
        case "playVoidedPollingIntervalSeconds": playVoidedPollingIntervalSeconds = try integer(60...86_400)
        case "playVoidedPollingOverlapSeconds": playVoidedPollingOverlapSeconds = try integer(0...(7 * 86_400))
        case "playReread": playReread = try boolean()
        case "playRereadIntervalSeconds": playRereadIntervalSeconds = try integer(1...86_400)
        case "playRereadExpiryDelaySeconds": playRereadExpiryDelaySeconds = try integer(0...(30 * 86_400))
        case "playRereadPendingSeconds": playRereadPendingSeconds = try integer(60...(30 * 86_400))
        case "playRereadLeaseSeconds": playRereadLeaseSeconds = try integer(2...86_400)
        case "playVoidedPollingPageSize": playVoidedPollingPageSize = try integer(1...1000)
        case "appStoreRatePercent": appStoreRatePercent = try integer(1...100)
        case "dashboardSecureCookies": dashboardSecureCookies = try boolean()
        case "dashboardSessionSeconds": dashboardSessionSeconds = try integer(300...(7 * 86_400))
        case "playApiBaseURL":
            guard let url = URL(string: value), url.scheme == "https" || url.scheme == "http", url.host != nil else {
                throw ServerConfigurationError(
                    code: "config.invalidValue", message: "\(key) from \(source) must be an http(s) URL")
            }
            playApiBaseURL = value
        case "playPushKeySet":
            guard !value.isEmpty, value.utf8.count <= 4096 else {
                throw ServerConfigurationError(
                    code: "config.invalidValue", message: "\(key) from \(source) must be a URL or a file path")
            }
            playPushKeySet = value
        case "sqliteStatementProfile":
            guard !value.isEmpty, value.utf8.count <= 4096 else {
                throw ServerConfigurationError(
                    code: "config.invalidValue", message: "\(key) from \(source) must be a file path")
            }
            sqliteStatementProfile = value
        default: throw ServerConfigurationError(code: "config.unknownKey", message: "unknown key \(key)")
        }
    }

    func validate() throws(ServerConfigurationError) {
        if let first = validationProblems().first { throw first }
    }

    /// What is wrong with the values together (each may be valid alone), in a fixed order.
    func validationProblems() -> [ServerConfigurationError] {
        var problems: [ServerConfigurationError] = []
        do {
            _ = try listenAddress()
        } catch {
            problems.append(error)
        }
        if sqliteStatementProfile != nil, case .postgres? = try? StoreLocation(resolvedDatabaseURL) {
            problems.append(
                ServerConfigurationError(
                    code: "config.statementProfileNeedsSQLite",
                    message:
                        "sqliteStatementProfile is kept for a SQLite database only (PostgreSQL has pg_stat_statements)")
            )
        }
        if let adminKey, adminKey.utf8.count < 16 {
            problems.append(
                ServerConfigurationError(
                    code: "config.adminKeyTooShort", message: "adminKey must be at least 16 characters"))
        }
        if secretsKey != nil && secretsKeyFile != nil {
            problems.append(
                ServerConfigurationError(
                    code: "config.secretsKeyTwice", message: "set secretsKey or secretsKeyFile, not both"))
        }
        // A delivery must end before its lease can, or another instance sends it at the same time.
        let minimumLease = Self.minimumWebhookLeaseSeconds(timeoutSeconds: webhookTimeoutSeconds)
        if webhookLeaseSeconds < minimumLease {
            problems.append(
                ServerConfigurationError(
                    code: "config.webhookLeaseTooShort",
                    message:
                        "webhookLeaseSeconds (\(webhookLeaseSeconds)) must be at least 3 × webhookTimeoutSeconds + 3 "
                        + "(\(minimumLease) for a timeout of \(webhookTimeoutSeconds) s): a delivery attempt may take "
                        + "two timeouts and must end before its lease can"))
        }
        return problems
    }

    /// The shortest `webhookLeaseSeconds` for a delivery timeout (`WebhookDeliverer.Settings`'s
    /// minimum lease, rounded up to whole seconds).
    public static func minimumWebhookLeaseSeconds(timeoutSeconds: Int) -> Int {
        let milliseconds = WebhookDeliverer.Settings.minimumLeaseMilliseconds(requestTimeout: .seconds(timeoutSeconds))
        return Int((milliseconds + 999) / 1000)
    }

    /// `listen` split into host and port.
    public func listenAddress() throws(ServerConfigurationError) -> (host: String, port: UInt16) {
        let invalid = ServerConfigurationError(
            code: "config.invalidListen", message: "listen must be HOST:PORT, e.g. 127.0.0.1:8080 or [::1]:8080")
        var host: Substring
        var port: Substring
        if listen.hasPrefix("[") {
            guard let close = listen.firstIndex(of: "]") else { throw invalid }
            host = listen[listen.index(after: listen.startIndex)..<close]
            let rest = listen[listen.index(after: close)...]
            guard rest.hasPrefix(":") else { throw invalid }
            port = rest.dropFirst()
        } else {
            guard let colon = listen.lastIndex(of: ":") else { throw invalid }
            host = listen[..<colon]
            port = listen[listen.index(after: colon)...]
        }
        guard !host.isEmpty, let number = UInt16(port) else { throw invalid }
        return (String(host), number)
    }

    /// `databaseURL`, or `sqlite:<dataDirectory>/storekeeper.sqlite`.
    public var resolvedDatabaseURL: String {
        databaseURL ?? "sqlite:" + (dataDirectory as NSString).appendingPathComponent("storekeeper.sqlite")
    }
}

/// How `ServerConfiguration.assemble` treats a problem: `load` stops at the first, `check`
/// collects them all; and where each key's value came from.
struct ConfigurationProblems {
    let stopAtFirst: Bool
    var found: [ServerConfigurationError] = []
    /// Key → the source of its value (the file, a variable, `--key`); absent: the default.
    var sources: [String: String] = [:]

    mutating func report(_ problem: ServerConfigurationError) throws(ServerConfigurationError) {
        if stopAtFirst { throw problem }
        found.append(problem)
    }
}

/// Why a configuration could not be loaded. `code` is stable; messages name keys and sources,
/// never values (which may be secrets).
/// - Note: Immutable value; `Sendable`.
public struct ServerConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: String
    public var message: String

    public var description: String { "\(code): \(message)" }
}
