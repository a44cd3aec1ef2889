/// The usage and help text of a command, generated from its declaration.
enum CommandUsage {
    /// `usage: storekeeper appstore history ID --key P8 [options]`, then the summary, the
    /// arguments, options, flags and subcommands with their help, then the discussion.
    static func text(_ command: Command, path: [String]) -> String {
        var lines = ["usage: " + synopsis(command, path: path), "", command.summary]
        var arguments: [(String, String)] = command.arguments.map { argument in
            var help = argument.help
            if argument.readsStandardInput { help += " (absent or -: standard input)" }
            return (argument.name, help)
        }
        if !command.subcommands.isEmpty { arguments = [] }
        if !arguments.isEmpty { lines += ["", "arguments:"] + table(arguments) }
        let options: [(String, String)] =
            command.options.map { option in
                var notes: [String] = []
                if option.isRequired { notes.append("required") }
                if option.isRepeatable { notes.append("repeatable") }
                if !option.choices.isEmpty { notes.append("one of: " + option.choices.joined(separator: ", ")) }
                if let value = option.defaultValue { notes.append("default: " + value) }
                let help = notes.isEmpty ? option.help : option.help + " (" + notes.joined(separator: "; ") + ")"
                return (option.name + " " + option.valueName, help)
            } + command.flags.map { ($0.name, $0.help) } + [("-h, --help", Command.helpFlag.help)]
        lines += ["", "options:"] + table(options)
        if !command.subcommands.isEmpty {
            lines += ["", "commands:"] + table(command.subcommands.map { ($0.name, $0.summary) })
            let prefix = (["storekeeper"] + path).joined(separator: " ")
            lines += ["", "Run '\(prefix) COMMAND --help' for a command's options."]
        }
        if let discussion = command.discussion { lines += ["", discussion] }
        return lines.joined(separator: "\n")
    }

    /// One line: the path, the required options, `[options]`, the arguments.
    static func synopsis(_ command: Command, path: [String]) -> String {
        var words = ["storekeeper"] + path
        if !command.subcommands.isEmpty { return (words + ["COMMAND", "[options]"]).joined(separator: " ") }
        for option in command.options where option.isRequired {
            words.append("\(option.name) \(option.valueName)" + (option.isRepeatable ? "..." : ""))
        }
        words.append("[options]")
        for argument in command.arguments {
            var word = argument.name
            if argument.readsStandardInput { word += "|-" }
            if argument.isRepeatable { word += "..." }
            words.append(argument.isRequired ? word : "[\(word)]")
        }
        return words.joined(separator: " ")
    }

    private static func table(_ rows: [(String, String)]) -> [String] {
        let width = min(30, rows.map(\.0.count).max() ?? 0)
        return rows.map { left, right in
            let padded =
                left.count >= width ? left + "  " : left + String(repeating: " ", count: width - left.count + 2)
            return left.count > width
                ? "  \(left)\n  \(String(repeating: " ", count: width + 2))\(right)" : "  \(padded)\(right)"
        }
    }
}
