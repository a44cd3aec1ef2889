import AppStoreModels
import Foundation
import Storage
import StorekeeperIngestion

/// The child process of the scheduler crash test (`StorekeeperTestProbes schedule`): runs
/// access scheduler passes (`ScheduledChanges.commitDue`) at `--now` until nothing is due,
/// printing `pass N` after each committed pass and `done` at the end, so a parent that kills
/// it with SIGKILL at any instant can check that each due instant is processed once.
///
///     StorekeeperTestProbes schedule --database URL --now MILLISECONDS [--limit N]
/// - Note: Runs on the calling thread, which it blocks; not for use inside async code.
public enum ScheduleCrashProbe {
    public static func run(_ arguments: [String]) -> Int32 {
        var database: String?
        var now: Int64?
        var limit = 2
        var index = 0
        while index < arguments.count {
            let value = index + 1 < arguments.count ? arguments[index + 1] : nil
            switch arguments[index] {
            case "--database": database = value
            case "--now": now = value.flatMap { Int64($0) }
            case "--limit": limit = value.flatMap { Int($0) } ?? limit
            default:
                FileHandle.standardError.write(
                    Data("usage: StorekeeperTestProbes schedule --database URL --now MS [--limit N]\n".utf8))
                return 2
            }
            index += 2
        }
        guard let database, let now else {
            FileHandle.standardError.write(Data("schedule probe: --database and --now are required\n".utf8))
            return 2
        }
        let outcome = ProbeTask.wait { [database, now, limit] in
            try await loop(database: database, now: Timestamp(millisecondsSince1970: now), limit: limit)
        }
        switch outcome {
        case .failure(let error):
            FileHandle.standardError.write(Data("schedule probe: \(error)\n".utf8))
            return 1
        case .success:
            return 0
        }
    }

    static func loop(database: String, now: Timestamp, limit: Int) async throws {
        let store = try await StoreLocation(database).open()
        while true {
            let pass = try await ScheduledChanges.commitDue(in: store, now: now, limit: limit)
            // Acknowledge only after COMMIT returned.
            FileHandle.standardOutput.write(Data("pass \(pass.reevaluated)\n".utf8))
            if pass.reevaluated == 0 { break }
        }
        FileHandle.standardOutput.write(Data("done\n".utf8))
        await store.close()
    }
}
