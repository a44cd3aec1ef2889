import Foundation
import StorekeeperServer

/// `storekeeper config check [FILE]`: reads a configuration exactly as `serve` does (the file,
/// then `STOREKEEPER_…` variables; `ServerConfiguration.check` is `load` collecting instead of
/// stopping), prints every effective setting with its source and secrets redacted, and lists
/// every problem on standard error. Exit 0 when `serve` would accept it, 1 otherwise.
enum ConfigCommands {
    static let command = Command(
        name: "config", summary: "the server's configuration",
        subcommands: [check])

    static let check = Command(
        name: "check", summary: "validate a configuration and print the effective settings, secrets redacted",
        discussion: """
            Reads FILE (JSON, as serve --config reads it) and the STOREKEEPER_… variables of this
            environment, later sources winning, and prints each setting with its source (default, the
            file, or the variable). Secrets (adminKey, secretsKey, a database URL's password) print as
            <redacted>. Every problem is listed on standard error, one per line, as code: message.
            Also checked: the secrets key (secretsKey or secretsKeyFile: readable, 32 bytes, not open to
            other users) and the database URL's form; the database is not contacted.
            Exit codes: 0 valid, 1 problems found, 2 usage.
            """,
        arguments: [Argument(name: "FILE", help: "the configuration file (JSON)", isRequired: false)],
        action: { arguments in
            let report = ServerConfiguration.check(file: arguments.positional.first)
            var table = TextTable(headers: ["KEY", "VALUE", "SOURCE"])
            for setting in report.settings { table.add([setting.key, setting.value, setting.source]) }
            print(table.text)
            guard report.problems.isEmpty else {
                let count = report.problems.count
                var text = "\(count) problem\(count == 1 ? "" : "s"):\n"
                for problem in report.problems { text += "\(problem.code): \(problem.message)\n" }
                FileHandle.standardError.write(Data(text.utf8))
                return 1
            }
            print("configuration valid")
            return 0
        })
}
