import Foundation
import Testing

/// `storekeeper config check [FILE]` (issue 14): the configuration `serve` would read, every
/// setting with its source and secrets redacted, and every problem listed, run as the binary.
struct ConfigCheckCLITests {
    let host = SecretsCLITests()

    /// The table `config check` prints for these rows (KEY, VALUE, SOURCE), as `TextTable` lays
    /// it out: columns padded to their widest cell and two spaces apart, the last unpadded.
    static func table(_ rows: [(String, String, String)]) -> String {
        let all = [("KEY", "VALUE", "SOURCE")] + rows
        let key = all.map(\.0.count).max()!
        let value = all.map(\.1.count).max()!
        return all.map {
            $0.0.padding(toLength: key, withPad: " ", startingAt: 0) + "  "
                + $0.1.padding(toLength: value, withPad: " ", startingAt: 0) + "  " + $0.2
        }.joined(separator: "\n") + "\n"
    }

    /// Every key with its default, in `ServerConfiguration.keys` order, then `changes` applied.
    static func rows(_ changes: [String: (String, String)]) -> [(String, String, String)] {
        let defaults: [(String, String)] = [
            ("listen", "127.0.0.1:8080"), ("databaseURL", "sqlite:data/storekeeper.sqlite"), ("dataDirectory", "data"),
            ("adminKey", "-"), ("maxBodySize", "1048576"), ("maxHeaderSize", "16384"), ("connectionLimit", "1000"),
            ("connectionTimeoutSeconds", "30"), ("threadPoolSize", "4"), ("shutdownGraceSeconds", "10"),
            ("accessLog", "true"), ("webhookWorker", "true"), ("webhookPollMilliseconds", "250"),
            ("webhookMaxAgeSeconds", "259200"), ("webhookTimeoutSeconds", "10"), ("appRefreshMilliseconds", "1000"),
            ("requestHeadTimeoutSeconds", "10"), ("minBodyBytesPerSecond", "1024"), ("maxConnectionsPerAddress", "256"),
            ("secretsKey", "-"), ("secretsKeyFile", "-"), ("webhookAllowedDestinations", "-"),
            ("accessScheduler", "true"), ("accessSchedulerPollMilliseconds", "2000"), ("jobWorker", "true"),
            ("purchaseCompletionWaitMilliseconds", "2000"), ("webhookLeaseSeconds", "60"), ("webhookBatchSize", "16"),
            ("historyReplay", "true"), ("historyReplayIntervalSeconds", "3600"),
            ("historyReplayOverlapSeconds", "3600"),
            ("historyReplayOnlyFailures", "false"), ("historyReplayLeaseSeconds", "900"), ("jobLeaseSeconds", "300"),
            ("statusPolling", "true"), ("statusPollingIntervalSeconds", "60"),
            ("statusPollingExpiryDelaySeconds", "3600"), ("statusPollingBillingRetrySeconds", "86400"),
            ("statusPollingStaleSeconds", "604800"), ("statusPollingLeaseSeconds", "300"),
            ("customerSyncIntervalSeconds", "60"),
            ("appStoreRatePercent", "100"), ("dashboardSecureCookies", "false"), ("dashboardSessionSeconds", "28800"),
            ("playApiBaseURL", "-"), ("playPushKeySet", "-"), ("playVoidedPolling", "true"),
            ("playVoidedPollingIntervalSeconds", "3600"), ("playVoidedPollingOverlapSeconds", "3600"),
            ("playReread", "true"), ("playRereadIntervalSeconds", "60"), ("playRereadExpiryDelaySeconds", "3600"),
            ("playRereadPendingSeconds", "86400"), ("playRereadLeaseSeconds", "300"),
            ("playVoidedPollingPageSize", "1000"), ("sqliteStatementProfile", "-"),
        ]
        return defaults.map { key, value in
            if let (changed, source) = changes[key] { return (key, changed, source) }
            return (key, value, "default")
        }
    }

    @Test func validConfigurationPrintsEverySettingWithSecretsRedacted() throws {
        let directory = try CLITests().temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("storekeeper.json").path
        try Data(
            #"{"listen": "0.0.0.0:9090", "adminKey": "file-admin-key-0123456789", "webhookAllowedDestinations": ["127.0.0.1", "hooks.internal"], "historyReplay": false}"#
                .utf8
        ).write(to: URL(fileURLWithPath: file))
        let run = try host.run(
            ["config", "check", file],
            environment: [
                "STOREKEEPER_THREAD_POOL_SIZE": "4",
                "STOREKEEPER_DATABASE_URL": "postgres://storekeeper:hunter2-password@db.example:5432/storekeeper",
                "STOREKEEPER_SECRETS_KEY": SecretsCLITests.keyA,
                // The environment wins over the file.
                "STOREKEEPER_ADMIN_KEY": "env-admin-key-0123456789",
            ])
        let expected =
            Self.table(
                Self.rows([
                    "listen": ("0.0.0.0:9090", file),
                    "databaseURL": (
                        "postgres://storekeeper:<redacted>@db.example:5432/storekeeper", "STOREKEEPER_DATABASE_URL"
                    ),
                    "adminKey": ("<redacted>", "STOREKEEPER_ADMIN_KEY"),
                    "threadPoolSize": ("4", "STOREKEEPER_THREAD_POOL_SIZE"),
                    "secretsKey": ("<redacted>", "STOREKEEPER_SECRETS_KEY"),
                    "webhookAllowedDestinations": ("127.0.0.1/32,hooks.internal", file),
                    "historyReplay": ("false", file),
                ])) + "configuration valid\n"
        #expect(run == SecretsCLITests.Run(status: 0, stdout: expected, stderr: ""))
        for secret in ["hunter2-password", "file-admin-key", "env-admin-key", SecretsCLITests.keyA] {
            #expect(!run.stdout.contains(secret))
        }
    }

    @Test func everyProblemIsListedAndExitsOne() throws {
        let directory = try CLITests().temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("storekeeper.json").path
        try Data(#"{"maxBodySize": 0, "typo": true, "dataDirectory": "/srv/storekeeper"}"#.utf8).write(
            to: URL(fileURLWithPath: file))
        let keyFile = directory.appendingPathComponent("missing.key").path
        let run = try host.run(
            ["config", "check", file],
            environment: [
                "STOREKEEPER_THREAD_POOL_SIZE": "4", "STOREKEEPER_LISTEN": "nonsense",
                "STOREKEEPER_ADMIN_KEY": "short-key", "STOREKEEPER_CONNECTION_LIMIT": "0",
                "STOREKEEPER_WEBHOOK_TIMEOUT_SECONDS": "30", "STOREKEEPER_SECRETS_KEY_FILE": keyFile,
            ])
        #expect(run.status == 1)
        #expect(
            run.stdout
                == Self.table(
                    Self.rows([
                        "listen": ("nonsense", "STOREKEEPER_LISTEN"),
                        "databaseURL": ("sqlite:/srv/storekeeper/storekeeper.sqlite", "default"),
                        "dataDirectory": ("/srv/storekeeper", file),
                        "adminKey": ("<redacted>", "STOREKEEPER_ADMIN_KEY"),
                        "threadPoolSize": ("4", "STOREKEEPER_THREAD_POOL_SIZE"),
                        "webhookTimeoutSeconds": ("30", "STOREKEEPER_WEBHOOK_TIMEOUT_SECONDS"),
                        "secretsKeyFile": (keyFile, "STOREKEEPER_SECRETS_KEY_FILE"),
                    ])))
        #expect(
            run.stderr
                == """
                7 problems:
                config.invalidValue: maxBodySize from \(file) must be an integer in 1...268435456
                config.unknownKey: unknown key typo in \(file)
                config.invalidValue: connectionLimit from STOREKEEPER_CONNECTION_LIMIT must be an integer in 1...1000000
                config.invalidListen: listen must be HOST:PORT, e.g. 127.0.0.1:8080 or [::1]:8080
                config.adminKeyTooShort: adminKey must be at least 16 characters
                config.webhookLeaseTooShort: webhookLeaseSeconds (60) must be at least 3 × webhookTimeoutSeconds + 3 \
                (93 for a timeout of 30 s): a delivery attempt may take two timeouts and must end before its lease can
                secrets.keyFileUnreadable: cannot open the secrets key file \(keyFile): No such file or directory

                """)
        #expect(!run.stdout.contains("short-key") && !run.stderr.contains("short-key"))

        // What serve refuses first is the first problem listed.
        let serve = try host.run(
            ["serve", "--config", file], environment: ["STOREKEEPER_LISTEN": "nonsense"])
        #expect(
            serve
                == SecretsCLITests.Run(
                    status: 2, stdout: "",
                    stderr: "error: config.invalidValue: maxBodySize from \(file) must be an integer in 1...268435456\n"
                ))
    }

    @Test func unreadableAndMalformedFiles() throws {
        let directory = try CLITests().temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("absent.json").path
        let run = try host.run(["config", "check", missing], environment: ["STOREKEEPER_THREAD_POOL_SIZE": "4"])
        #expect(run.status == 1)
        #expect(run.stdout == Self.table(Self.rows(["threadPoolSize": ("4", "STOREKEEPER_THREAD_POOL_SIZE")])))
        #expect(run.stderr == "1 problem:\nconfig.fileUnreadable: cannot read \(missing)\n")
        let list = directory.appendingPathComponent("list.json").path
        try Data("[1, 2]".utf8).write(to: URL(fileURLWithPath: list))
        let malformed = try host.run(["config", "check", list], environment: ["STOREKEEPER_THREAD_POOL_SIZE": "4"])
        #expect(malformed.status == 1)
        #expect(malformed.stderr == "1 problem:\nconfig.fileNotJSON: \(list) is not a JSON object\n")
        // Without a file: the defaults and the environment alone.
        let bare = try host.run(["config", "check"], environment: ["STOREKEEPER_THREAD_POOL_SIZE": "4"])
        #expect(
            bare
                == SecretsCLITests.Run(
                    status: 0,
                    stdout: Self.table(Self.rows(["threadPoolSize": ("4", "STOREKEEPER_THREAD_POOL_SIZE")]))
                        + "configuration valid\n", stderr: ""))
    }
}
