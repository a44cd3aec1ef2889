import Foundation
import SecretSealing
import Storage

/// What `storekeeper config check` reports: every setting as `serve` would use it (secrets
/// redacted) with where its value came from, and every problem `serve` would refuse to start
/// with, not only the first.
/// - Note: Immutable value; `Sendable`.
public struct ConfigurationCheck: Sendable, Hashable {
    /// One key's effective value.
    public struct Setting: Sendable, Hashable {
        public var key: String
        /// The value as text; `<redacted>` for a secret, `-` when unset.
        public var value: String
        /// `default`, the file's path, an environment variable's name, or `--key`.
        public var source: String
    }

    /// In `ServerConfiguration.keys` order.
    public var settings: [Setting]
    /// Each value refused, then what is wrong with the values together, then the secrets key
    /// and database URL as `serve` would open them.
    public var problems: [ServerConfigurationError]
}

extension ServerConfiguration {
    /// What a secret value is shown as.
    public static let redacted = "<redacted>"

    /// Reads the configuration as `load` does, from the same sources, but collects every
    /// problem instead of stopping at the first; a value refused leaves the one before it.
    /// Also opens the secrets key (file permissions, length) and parses the database URL,
    /// which `serve` does next, without connecting.
    public static func check(
        file: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment,
        overrides: [String: String] = [:]
    ) -> ConfigurationCheck {
        var problems = ConfigurationProblems(stopAtFirst: false)
        // Collecting never throws; the default is there for the compiler only.
        let configuration =
            (try? assemble(file: file, environment: environment, overrides: overrides, problems: &problems))
            ?? ServerConfiguration()
        var found = problems.found + configuration.validationProblems()
        do {
            _ = try configuration.loadSecretsKey()
        } catch {
            found.append(ServerConfigurationError(code: error.code.rawValue, message: error.message))
        }
        do {
            _ = try StoreLocation(configuration.resolvedDatabaseURL)
        } catch {
            found.append(
                ServerConfigurationError(code: "config.invalidDatabaseURL", message: "databaseURL: \(error.detail)"))
        }
        let settings = keys.map { key in
            ConfigurationCheck.Setting(
                key: key, value: configuration.displayValue(key), source: problems.sources[key] ?? "default")
        }
        return ConfigurationCheck(settings: settings, problems: found)
    }

    /// `key`'s value as `config check` shows it: secrets redacted, a database URL's password too.
    func displayValue(_ key: String) -> String {
        func optional(_ value: String?) -> String { value ?? "-" }
        func secret(_ value: String?) -> String { value == nil ? "-" : Self.redacted }
        switch key {
        case "listen": return listen
        case "databaseURL": return Self.redactingPassword(resolvedDatabaseURL)
        case "dataDirectory": return dataDirectory
        case "adminKey": return secret(adminKey)
        case "maxBodySize": return String(maxBodySize)
        case "maxHeaderSize": return String(maxHeaderSize)
        case "connectionLimit": return String(connectionLimit)
        case "connectionTimeoutSeconds": return String(connectionTimeoutSeconds)
        case "requestHeadTimeoutSeconds": return String(requestHeadTimeoutSeconds)
        case "minBodyBytesPerSecond": return String(minBodyBytesPerSecond)
        case "maxConnectionsPerAddress": return String(maxConnectionsPerAddress)
        case "threadPoolSize": return String(threadPoolSize)
        case "shutdownGraceSeconds": return String(shutdownGraceSeconds)
        case "accessLog": return String(accessLog)
        case "webhookWorker": return String(webhookWorker)
        case "webhookPollMilliseconds": return String(webhookPollMilliseconds)
        case "webhookMaxAgeSeconds": return String(webhookMaxAgeSeconds)
        case "webhookTimeoutSeconds": return String(webhookTimeoutSeconds)
        case "appRefreshMilliseconds": return String(appRefreshMilliseconds)
        case "secretsKey": return secret(secretsKey)
        case "secretsKeyFile": return optional(secretsKeyFile)
        case "webhookAllowedDestinations":
            return webhookAllowedDestinations.entries.isEmpty ? "-" : webhookAllowedDestinations.description
        case "accessScheduler": return String(accessScheduler)
        case "accessSchedulerPollMilliseconds": return String(accessSchedulerPollMilliseconds)
        case "jobWorker": return String(jobWorker)
        case "purchaseCompletionWaitMilliseconds": return String(purchaseCompletionWaitMilliseconds)
        case "webhookLeaseSeconds": return String(webhookLeaseSeconds)
        case "webhookBatchSize": return String(webhookBatchSize)
        case "historyReplay": return String(historyReplay)
        case "historyReplayIntervalSeconds": return String(historyReplayIntervalSeconds)
        case "historyReplayOverlapSeconds": return String(historyReplayOverlapSeconds)
        case "historyReplayOnlyFailures": return String(historyReplayOnlyFailures)
        case "historyReplayLeaseSeconds": return String(historyReplayLeaseSeconds)
        case "jobLeaseSeconds": return String(jobLeaseSeconds)
        case "statusPolling": return String(statusPolling)
        case "statusPollingIntervalSeconds": return String(statusPollingIntervalSeconds)
        case "statusPollingExpiryDelaySeconds": return String(statusPollingExpiryDelaySeconds)
        case "statusPollingBillingRetrySeconds": return String(statusPollingBillingRetrySeconds)
        case "statusPollingStaleSeconds": return String(statusPollingStaleSeconds)
        case "statusPollingLeaseSeconds": return String(statusPollingLeaseSeconds)
        case "customerSyncIntervalSeconds": return String(customerSyncIntervalSeconds)
        case "appStoreRatePercent": return String(appStoreRatePercent)
        case "dashboardSecureCookies": return String(dashboardSecureCookies)
        case "dashboardSessionSeconds": return String(dashboardSessionSeconds)
        case "playApiBaseURL": return optional(playApiBaseURL)
        case "playPushKeySet": return optional(playPushKeySet)
        case "playVoidedPolling": return String(playVoidedPolling)
        case "playVoidedPollingIntervalSeconds": return String(playVoidedPollingIntervalSeconds)
        case "playVoidedPollingOverlapSeconds": return String(playVoidedPollingOverlapSeconds)
        case "playReread": return String(playReread)
        case "playRereadIntervalSeconds": return String(playRereadIntervalSeconds)
        case "playRereadExpiryDelaySeconds": return String(playRereadExpiryDelaySeconds)
        case "playRereadPendingSeconds": return String(playRereadPendingSeconds)
        case "playRereadLeaseSeconds": return String(playRereadLeaseSeconds)
        case "playVoidedPollingPageSize": return String(playVoidedPollingPageSize)
        case "sqliteStatementProfile": return optional(sqliteStatementProfile)
        // A key added to `keys` without a line here shows as unknown rather than crash; the
        // check test fails on it.
        default: return "?"
        }
    }

    /// A database URL with its password (`user:PASSWORD@`, `password=` in the query) redacted.
    static func redactingPassword(_ url: String) -> String {
        var text = url
        if let scheme = text.range(of: "://") {
            let authorityEnd = text[scheme.upperBound...].firstIndex { "/?#".contains($0) } ?? text.endIndex
            let authority = text[scheme.upperBound..<authorityEnd]
            if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                text.replaceSubrange(text.index(after: colon)..<at, with: redacted)
            }
        }
        if let query = text.firstIndex(of: "?") {
            let parameters = text[text.index(after: query)...].split(separator: "&", omittingEmptySubsequences: false)
                .map { parameter -> String in
                    parameter.lowercased().hasPrefix("password=") ? "password=\(redacted)" : String(parameter)
                }
            text = String(text[...query]) + parameters.joined(separator: "&")
        }
        return text
    }
}
