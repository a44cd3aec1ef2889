/// Parses a command line against the declarations of `root`.
///
/// Conventions: the first word after a group names its subcommand; `-h`/`--help` anywhere
/// before `--` asks for the help of the deepest command named so far (even after a bad
/// option, so help always works); `--version` at the root; options as `--name value` or
/// `--name=value`; `--` ends options; `-` is a positional argument (standard input).
struct CommandLineParser {
    let root: Command

    /// What the command line asks for.
    enum Request {
        case run(Command, CommandLineArguments)
        case help([String])
        case version
    }

    /// A usage error and the command whose usage explains it.
    struct Failure: Error {
        let message: String
        let path: [String]
    }

    func parse(_ words: [String]) throws(Failure) -> Request {
        var command = root
        var path: [String] = []
        var index = 0
        while !command.subcommands.isEmpty {
            guard index < words.count else {
                throw Failure(message: "missing command", path: path)
            }
            let word = words[index]
            if word == "-h" || word == "--help" { return .help(path) }
            if path.isEmpty, word == "--version" { return .version }
            if word.hasPrefix("-"), word != "-" {
                let known = ["--help"] + (path.isEmpty ? ["--version"] : [])
                throw Failure(message: Self.unknown("option", word, among: known), path: path)
            }
            guard let next = command.subcommand(named: word) else {
                throw Failure(
                    message: Self.unknown("command", word, among: command.subcommands.map(\.name)), path: path)
            }
            command = next
            path.append(word)
            index += 1
        }
        let rest = Array(words[index...])
        let beforeDoubleDash = rest.prefix { $0 != "--" }
        if beforeDoubleDash.contains(where: { $0 == "-h" || $0 == "--help" }) { return .help(path) }
        do {
            return .run(command, try Self.leaf(command, path: path, words: rest))
        } catch {
            throw Failure(message: error.message, path: path)
        }
    }

    static func leaf(_ command: Command, path: [String], words: [String]) throws(UsageError) -> CommandLineArguments {
        var parsed = CommandLineArguments(path: path)
        for option in command.options {
            if let value = option.defaultValue { parsed.defaults[option.name] = value }
        }
        var onlyPositional = false
        var iterator = words.makeIterator()
        while let word = iterator.next() {
            if onlyPositional || word == "-" || !word.hasPrefix("-") {
                parsed.positional.append(word)
                continue
            }
            if word == "--" {
                onlyPositional = true
                continue
            }
            var name = word
            var inline: String?
            if word.hasPrefix("--"), let equals = word.firstIndex(of: "=") {
                name = String(word[..<equals])
                inline = String(word[word.index(after: equals)...])
            }
            if let option = command.options.first(where: { $0.name == name }) {
                guard let value = inline ?? iterator.next() else {
                    throw UsageError("\(name) needs a value")
                }
                if !option.isRepeatable, parsed.options[name] != nil {
                    throw UsageError("\(name) is given more than once")
                }
                if !option.choices.isEmpty, !option.choices.contains(value) {
                    throw UsageError("\(name) must be one of \(option.choices.joined(separator: ", ")), not \(value)")
                }
                parsed.options[name, default: []].append(value)
            } else if command.allFlags.contains(where: { $0.name == name }) {
                guard inline == nil else { throw UsageError("\(name) takes no value") }
                parsed.switches.insert(name)
            } else {
                let known = command.options.map(\.name) + command.allFlags.map(\.name)
                throw UsageError(unknown("option", name, among: known))
            }
        }
        let declared = command.arguments
        let required = declared.filter(\.isRequired)
        if parsed.positional.count < required.count {
            throw UsageError("missing \(required[parsed.positional.count].name)")
        }
        if declared.last?.isRepeatable != true, parsed.positional.count > declared.count {
            throw UsageError("unexpected argument \(parsed.positional[declared.count])")
        }
        if let missing = command.options.first(where: { $0.isRequired && parsed.options[$0.name] == nil }) {
            throw UsageError("missing \(missing.name) \(missing.valueName)")
        }
        return parsed
    }

    /// "unknown option --bundle (did you mean --bundle-id?)".
    static func unknown(_ kind: String, _ word: String, among known: [String]) -> String {
        guard let suggestion = ClosestName.find(word, among: known) else { return "unknown \(kind) \(word)" }
        return "unknown \(kind) \(word) (did you mean \(suggestion)?)"
    }
}

/// The known name closest to a mistyped one, if any is close enough to be a likely typo.
enum ClosestName {
    static func find(_ word: String, among known: [String]) -> String? {
        var best: (name: String, distance: Int)?
        for name in known {
            let distance = name.hasPrefix(word) && word.count > 2 ? 1 : editDistance(word, name)
            if distance < (best?.distance ?? Int.max) { best = (name, distance) }
        }
        guard let best, best.distance <= max(2, word.count / 4) else { return nil }
        return best.name
    }

    /// Levenshtein distance (insertions, deletions, substitutions), over characters.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        var current = previous
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
