import Foundation
import StorekeeperServer

/// Every command of the `storekeeper` binary, as one tree of declarations: `main` runs it, and
/// `help --json` prints it for tools and for the CLI tests that walk every command.
enum StorekeeperCommands {
    /// The CLI's version, printed by `storekeeper --version` (`StorekeeperVersion`, shared with `serve`).
    static let version = StorekeeperVersion.current

    static let root: Command = Command(
        name: "storekeeper", summary: "App Store purchase validation and entitlements",
        discussion: """
            Conventions: -h/--help on every command; options as --name VALUE or --name=VALUE; -- ends
            options; - reads standard input where a file is read. Exit codes: 0 done, 1 the work
            failed, 2 usage error (plus a command's own, such as 78 for a secrets-key problem).
            """,
        flags: [Flag(name: "--version", help: "print the version and exit")],
        subcommands: [ServeCommand.command, MigrateCommand.command] + TrustCommands.commands + [
            AppStoreCommands.command, SecretsCommands.command, ConfigCommands.command, AdminCommands.command,
            AnalyticsCommands.command, SimulateCommands.command, BackfillCommand.command,
            Quickstart.command,
            ShellCompletion.command, help,
        ])

    static let help: Command = Command(
        name: "help", summary: "print the usage of a command, every declaration as JSON, or docs/cli.md",
        arguments: [
            Argument(name: "COMMAND", help: "a command and its subcommands", isRequired: false, isRepeatable: true)
        ],
        flags: [
            Flag(name: "--json", help: "print every command's declaration as JSON"),
            Flag(name: "--markdown", help: "print the reference of every command (docs/cli.md)"),
        ],
        action: { arguments in
            if arguments.has("--markdown") {
                print(CommandReference.markdown(root), terminator: "")
                return 0
            }
            if arguments.has("--json") {
                print(Output.json(root))
                return 0
            }
            var command = root
            for name in arguments.positional {
                guard let next = command.subcommand(named: name) else {
                    throw UsageError(
                        CommandLineParser.unknown("command", name, among: command.subcommands.map(\.name)))
                }
                command = next
            }
            print(CommandUsage.text(command, path: arguments.positional))
            return 0
        })
}
