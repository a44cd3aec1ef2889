import Foundation
import StorekeeperTesting

/// Child processes of the storage tests, kept out of the shipped `storekeeper` binary: the
/// tests find this executable in the build directory beside themselves and spawn it.
///
///     StorekeeperTestProbes crash --database URL --prefix P [--count N]
///     StorekeeperTestProbes ingest --database URL [--customers N] …
///     StorekeeperTestProbes group-commit [--setup] --database URL --app ID --ca DIR …
///     StorekeeperTestProbes schedule --database URL --now MILLISECONDS [--limit N]
///     StorekeeperTestProbes scratch
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
// StorageTests' check that a scratch directory goes when the process exits: makes one with a
// file in it, prints its path, and exits when standard input ends.
case "scratch":
    let directory = try ScratchDirectories.make(prefix: "storekeeper-probe")
    _ = FileManager.default.createFile(
        atPath: directory.appendingPathComponent("file").path, contents: Data("x".utf8))
    FileHandle.standardOutput.write(Data((directory.path + "\n").utf8))
    _ = FileHandle.standardInput.readDataToEndOfFile()
    exit(0)
default:
    FileHandle.standardError.write(
        Data("usage: StorekeeperTestProbes crash|ingest|group-commit|schedule|scratch OPTIONS\n".utf8))
    exit(2)
}
