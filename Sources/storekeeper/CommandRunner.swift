import AppStoreTrust
import Foundation

/// Runs a command line against the declarations: the one place that turns outcomes into
/// output and exit codes.
///
/// - help (`-h`, `--help`, `help COMMAND`): the command's usage on standard output, exit 0;
/// - a usage error: the problem, a blank line and the usage on standard error, exit 2;
/// - a failure of the work: one line on standard error, exit 1 (a trust refusal as
///   `CATEGORY [rule]: detail`);
/// - otherwise the code the command's action returned.
struct CommandRunner {
    let root: Command
    let version: String

    func run(_ words: [String]) async -> Int32 {
        let request: CommandLineParser.Request
        do {
            request = try CommandLineParser(root: root).parse(words)
        } catch {
            return usageError(error.message, path: error.path)
        }
        switch request {
        case .version:
            print("storekeeper \(version)")
            return 0
        case .help(let path):
            print(usage(path))
            return 0
        case .run(let command, let arguments):
            guard let action = command.action else { return usageError("missing command", path: arguments.path) }
            do {
                return try await action(arguments)
            } catch let error as UsageError {
                return usageError(error.message, path: arguments.path)
            } catch let error as TrustError {
                return failure("\(error.category.rawValue) [\(error.rule.rawValue)]: \(error.detail)")
            } catch {
                return failure("error: \(error)")
            }
        }
    }

    /// The usage of the command at `path` (which the parser has resolved).
    func usage(_ path: [String]) -> String {
        var command = root
        for name in path { command = command.subcommand(named: name) ?? command }
        return CommandUsage.text(command, path: path)
    }

    private func usageError(_ message: String, path: [String]) -> Int32 {
        FileHandle.standardError.write(Data("\(message)\n\n\(usage(path))\n".utf8))
        return 2
    }

    private func failure(_ line: String) -> Int32 {
        FileHandle.standardError.write(Data((line + "\n").utf8))
        return 1
    }
}
