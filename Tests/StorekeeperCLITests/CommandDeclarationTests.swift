import Foundation
import Testing

/// Walks every command and subcommand the binary declares (`storekeeper help --json`), so a
/// new command cannot skip the conventions: `--help` and `-h` print its usage on standard
/// output and exit 0; an unknown option exits 2 naming it and the closest known one, with the
/// usage on standard error; a missing required argument, option or subcommand exits 2 naming it.
struct CommandDeclarationTests {
    let cli = CLITests()

    /// The declarations as `help --json` prints them.
    struct Declared: Decodable {
        struct Argument: Decodable {
            var name: String
            var isRequired: Bool
        }
        struct Option: Decodable {
            var name: String
            var valueName: String
            var isRequired: Bool
        }
        struct Flag: Decodable {
            var name: String
        }
        var name: String
        var summary: String
        var arguments: [Argument]
        var options: [Option]
        var flags: [Flag]
        var subcommands: [Declared]
    }

    /// Every command with its path from the root, the root first.
    func everyCommand() throws -> [(path: [String], command: Declared)] {
        let printed = try cli.run(["help", "--json"])
        #expect(printed.status == 0)
        let root = try JSONDecoder().decode(Declared.self, from: Data(printed.stdout.utf8))
        var found: [(path: [String], command: Declared)] = []
        func walk(_ command: Declared, _ path: [String]) {
            found.append((path, command))
            for subcommand in command.subcommands { walk(subcommand, path + [subcommand.name]) }
        }
        walk(root, [])
        return found
    }

    func usagePrefix(_ path: [String]) -> String { "usage: " + (["storekeeper"] + path).joined(separator: " ") + " " }

    @Test func everyCommandDeclaresTheTreeMainRuns() throws {
        let paths = try everyCommand().map { $0.path.joined(separator: " ") }
        #expect(
            paths == [
                "", "serve", "migrate", "verify", "receipt", "receipt decode", "ca", "ca init", "jws", "jws sign",
                "jws verify", "token", "offer", "offer sign", "offer verify", "offer jws", "appstore",
                "appstore transaction", "appstore history", "appstore statuses", "appstore refunds",
                "appstore notifications", "appstore test-notification", "secrets", "secrets new-key",
                "secrets status", "secrets rotate", "config", "config check", "admin", "admin apps", "admin apps list",
                "admin apps show",
                "admin apps create", "admin apps update", "admin keys", "admin keys list", "admin keys create",
                "admin keys revoke",
                "admin catalog", "admin catalog get", "admin catalog put", "admin webhooks", "admin webhooks list",
                "admin webhooks add", "admin webhooks remove", "admin webhooks test", "admin deliveries",
                "admin deliveries failed", "admin deliveries replay",
                "admin customers", "admin customers show", "admin customers events", "admin customers facts",
                "admin customers restore", "admin customers sync", "admin notifications", "admin notifications recent",
                "analytics", "analytics rebuild", "analytics rates", "analytics rates import", "simulate",
                "simulate serve", "simulate run", "simulate play", "backfill",
                "backfill receipts",
                "quickstart",
                "completion", "help",
            ])
    }

    @Test func helpOnEveryCommandPrintsItsUsageAndExitsZero() throws {
        for (path, command) in try everyCommand() {
            let help = try cli.run(path + ["--help"])
            #expect(help.status == 0, "\(path)")
            #expect(help.stderr == "", "\(path)")
            #expect(help.stdout.hasPrefix(usagePrefix(path)), "\(path): \(help.stdout)")
            #expect(help.stdout.contains("\n\n\(command.summary)\n"), "\(path)")
            for name in command.options.map(\.name) + command.flags.map(\.name) + command.subcommands.map(\.name) {
                #expect(help.stdout.contains("  \(name)"), "\(path) lists \(name)")
            }
            #expect(try cli.run(path + ["-h"]) == help, "\(path)")
            #expect(try cli.run(["help"] + path) == help, "\(path)")
        }
    }

    @Test func anUnknownOptionIsNamedWithTheClosestKnownOne() throws {
        for (path, command) in try everyCommand() {
            let known = command.options.first?.name ?? "--help"
            let typo = String(known.dropLast())
            let result = try cli.run(path + [typo])
            #expect(result.status == 2, "\(path)")
            #expect(result.stdout == "", "\(path)")
            #expect(
                result.stderr.hasPrefix("unknown option \(typo) (did you mean \(known)?)\n\n" + usagePrefix(path)),
                "\(path): \(result.stderr)")
        }
    }

    @Test func aMissingRequiredArgumentOrOptionIsNamed() throws {
        var checked = 0
        for (path, command) in try everyCommand() {
            let missing: String
            if !command.subcommands.isEmpty {
                missing = "missing command"
            } else if let argument = command.arguments.first(where: \.isRequired) {
                missing = "missing \(argument.name)"
            } else if let option = command.options.first(where: \.isRequired) {
                missing = "missing \(option.name) \(option.valueName)"
            } else {
                continue  // nothing required: running it bare would do its work
            }
            checked += 1
            let result = try cli.run(path)
            #expect(result.status == 2, "\(path)")
            #expect(result.stdout == "", "\(path)")
            #expect(result.stderr.hasPrefix(missing + "\n\n" + usagePrefix(path)), "\(path): \(result.stderr)")
        }
        #expect(checked == 58)
    }

    @Test func conventionsOfTheParser() throws {
        let version = try cli.run(["--version"])
        #expect(version == CLITests.Run(status: 0, stdout: "storekeeper 0.1.0\n", stderr: ""))

        let unknown = try cli.run(["verfy"])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.hasPrefix("unknown command verfy (did you mean verify?)\n\nusage: storekeeper COMMAND"))

        // --name=value, a second value for a non-repeatable option, a value for a flag.
        let twice = try cli.run(["verify", "--bundle-id=a", "--bundle-id", "b"])
        #expect(twice.status == 2)
        #expect(twice.stderr.hasPrefix("--bundle-id is given more than once\n\nusage: storekeeper verify "))
        let flagValue = try cli.run(["migrate", "--database", "x", "--check=yes"])
        #expect(flagValue.status == 2)
        #expect(flagValue.stderr.hasPrefix("--check takes no value\n\nusage: storekeeper migrate "))
        let choice = try cli.run(["verify", "--bundle-id", "b", "--type=receipt"])
        #expect(choice.status == 2)
        #expect(
            choice.stderr.hasPrefix(
                "--type must be one of transaction, renewal, notification, app-transaction, auto, not receipt\n\n"))
        let extra = try cli.run(["ca", "init", "a", "b"])
        #expect(extra.status == 2)
        #expect(extra.stderr.hasPrefix("unexpected argument b\n\nusage: storekeeper ca init "))

        // After --, words that look like options are arguments; --help there is not a request.
        let directory = try cli.temporaryDirectory()
        let created = try cli.run(["ca", "init", "--years=2", "--", "--help"], in: directory)
        #expect(created.status == 0, "\(created.stderr)")
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("--help/root.der").path))
        let years = try cli.run(["ca", "init", "--years", "many", directory.path])
        #expect(years.status == 2)
        #expect(years.stderr.hasPrefix("--years must be a number from 1 to 100\n\nusage: storekeeper ca init "))
    }

    /// docs/cli.md is what `help --markdown` prints: regenerate it with
    /// `.build/debug/storekeeper help --markdown > docs/cli.md`.
    @Test func theCommittedReferenceIsCurrent() throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let committed = try String(
            contentsOf: repository.appendingPathComponent("docs/cli.md"), encoding: .utf8)
        let generated = try cli.run(["help", "--markdown"])
        #expect(generated.status == 0)
        #expect(generated.stdout.hasPrefix("# The `storekeeper` command line\n"))
        #expect(
            generated.stdout.contains("\n## storekeeper appstore history\n\n```\nusage: storekeeper appstore history "))
        #expect(committed == generated.stdout, "docs/cli.md is stale: run storekeeper help --markdown > docs/cli.md")
    }

    /// The bash script, sourced into a real bash, completes subcommands, options and choices.
    @Test(arguments: ["bash", "zsh"]) func completionScriptsComplete(shell: String) throws {
        let script = try cli.run(["completion", shell])
        #expect(script.status == 0)
        #expect(script.stderr == "")
        guard shell == "bash" else {
            #expect(script.stdout.hasPrefix("#compdef storekeeper\n"))
            #expect(script.stdout.contains("autoload -U +X bashcompinit && bashcompinit\n# bash completion"))
            #expect(script.stdout.contains("\n_storekeeper() {\n"))
            return
        }
        let file = try cli.temporaryDirectory().appendingPathComponent("storekeeper.bash")
        try script.stdout.write(to: file, atomically: true, encoding: .utf8)
        func complete(_ words: [String]) throws -> [String] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            let quoted = words.map { "'\($0)'" }.joined(separator: " ")
            process.arguments = [
                "-c",
                "source '\(file.path)'; COMP_WORDS=(storekeeper \(quoted)); COMP_CWORD=\(words.count); "
                    + "_storekeeper; printf '%s\\n' \"${COMPREPLY[@]}\"",
            ]
            let out = Pipe()
            process.standardOutput = out
            try process.run()
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            return text.split(separator: "\n").map(String.init)
        }
        #expect(try complete(["app"]) == ["appstore"])
        #expect(try complete(["appstore", "hi"]) == ["history"])
        #expect(try complete(["appstore", "history", "--sandbox-fallback", "--re"]) == ["--revision", "--revoked"])
        #expect(try complete(["verify", "--type", "re"]) == ["renewal"])
        #expect(try complete(["secrets", "rotate", "--new"]) == ["--new-key-file"])
        #expect(try complete(["--ver"]) == ["--version"])
    }
}
