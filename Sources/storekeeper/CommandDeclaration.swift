/// A command as declared: its name, help, positional arguments, options, flags and
/// subcommands. Parsing, validation, usage, help and the machine-readable listing
/// (`storekeeper help --json`) are all generated from these declarations, so a command cannot
/// have an option its help does not show.
///
/// A command has either an `action` (a leaf) or `subcommands` (a group), never both.
/// - Note: Immutable value; `Sendable`.
struct Command: Sendable, Encodable {
    /// The work: receives the parsed values, returns the exit code (0 done, 1 failed, or a
    /// command's own documented code such as 78). Usage errors are thrown as `UsageError`.
    typealias Action = @Sendable (CommandLineArguments) async throws -> Int32

    var name: String
    var summary: String
    /// Paragraphs printed after the options (formats, exit codes, examples).
    var discussion: String? = nil
    var arguments: [Argument] = []
    var options: [Option] = []
    var flags: [Flag] = []
    var subcommands: [Command] = []
    var action: Action? = nil

    private enum CodingKeys: String, CodingKey {
        case name, summary, discussion, arguments, options, flags, subcommands
    }

    /// `-h`/`--help`, which every command has.
    static let helpFlag = Flag(name: "--help", help: "print this help and exit")

    /// Every flag this command accepts, `--help` included.
    var allFlags: [Flag] { flags + [Self.helpFlag] }

    func subcommand(named name: String) -> Command? { subcommands.first { $0.name == name } }
}

/// A positional argument. `readsStandardInput`: absent or `-` means standard input.
struct Argument: Sendable, Encodable {
    var name: String
    var help: String
    var isRequired = true
    var isRepeatable = false
    var readsStandardInput = false
}

/// An option taking a value: `--name value` or `--name=value`.
struct Option: Sendable, Encodable {
    var name: String
    var valueName: String
    var help: String
    var defaultValue: String? = nil
    var isRequired = false
    /// Given more than once, its values accumulate (`--root a --root b`); otherwise a second
    /// occurrence is a usage error.
    var isRepeatable = false
    /// When not empty, the only values accepted.
    var choices: [String] = []
}

/// A switch without a value.
struct Flag: Sendable, Encodable {
    var name: String
    var help: String
}
