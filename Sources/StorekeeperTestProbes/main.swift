import Foundation

/// Child processes of the storage tests, kept out of the shipped `storekeeper` binary: the
/// tests find this executable in the build directory beside themselves and spawn it.
///
///     StorekeeperTestProbes crash --database URL --prefix P [--count N]
///     StorekeeperTestProbes ingest --database URL [--customers N] …
///     StorekeeperTestProbes group-commit [--setup] --database URL --app ID --ca DIR …
///     StorekeeperTestProbes schedule --database URL --now MILLISECONDS [--limit N]
let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
// Killed with SIGKILL by StorageTests' crash-recovery test.
case "crash": exit(StoreCrashProbe.run(Array(arguments.dropFirst())))
// One of the processes of StorageTests' multi-process ingestion test.
case "ingest": exit(StoreIngestionProbe.run(Array(arguments.dropFirst())))
// Killed with SIGKILL by StorageTests' group-commit crash test, while ingesting through `Ingestion`.
case "group-commit": exit(GroupCommitCrashProbe.run(Array(arguments.dropFirst())))
// Killed with SIGKILL by StorageTests' scheduler crash test, while due instants are processed.
case "schedule": exit(ScheduleCrashProbe.run(Array(arguments.dropFirst())))
default:
    FileHandle.standardError.write(
        Data("usage: StorekeeperTestProbes crash|ingest|group-commit|schedule OPTIONS\n".utf8))
    exit(2)
}
