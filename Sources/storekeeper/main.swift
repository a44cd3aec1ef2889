import Foundation
import StorekeeperIngestion

// Before any thread allocates: freed memory is kept for reuse (see AllocatorRetention).
AllocatorRetention.apply()

// The one bridge into async code: top-level `await` makes this an async main.
exit(
    await CommandRunner(root: StorekeeperCommands.root, version: StorekeeperCommands.version).run(
        Array(CommandLine.arguments.dropFirst())))
