import AppStoreModels
import Dispatch
import Foundation
import Storage
import StorekeeperTesting
import Synchronization

/// The child process of the multi-process ingestion test (`StorekeeperTestProbes ingest`):
/// one server-like process with several tasks ingesting its share of the same deliveries the
/// other processes get (the `IngestionWorkload` notifications, each delivered `copies` times,
/// every copy in its own seeded order). Prints `new N` (notifications that were new to the
/// database when this process stored them) and exits 0.
public enum StoreIngestionProbe {
    struct Options {
        var database = ""
        var customers = 200
        var perCustomer = 10
        var copies = 3
        var process = 0
        var processes = 1
        var tasks = 4
        var seed: UInt64 = 1
    }

    static let usage = """
        usage: StorekeeperTestProbes ingest --database URL [--customers N] [--per-customer N] [--copies N]
                                            [--process I --processes K] [--tasks N] [--seed S]
        """

    public static func run(_ arguments: [String]) -> Int32 {
        var options = Options()
        var index = 0
        while index < arguments.count {
            let value = index + 1 < arguments.count ? arguments[index + 1] : ""
            switch arguments[index] {
            case "--database": options.database = value
            case "--customers": options.customers = Int(value) ?? -1
            case "--per-customer": options.perCustomer = Int(value) ?? -1
            case "--copies": options.copies = Int(value) ?? -1
            case "--process": options.process = Int(value) ?? -1
            case "--processes": options.processes = Int(value) ?? -1
            case "--tasks": options.tasks = Int(value) ?? -1
            case "--seed": options.seed = UInt64(value) ?? 0
            default: options.customers = -1
            }
            index += 2
        }
        guard !options.database.isEmpty, options.customers > 0, options.perCustomer > 0, options.copies > 0,
            options.processes > 0, (0..<options.processes).contains(options.process), options.tasks > 0
        else {
            FileHandle.standardError.write(Data((usage + "\n").utf8))
            return 2
        }
        let outcome = ProbeTask.wait { [options] in try await ingest(options) }
        switch outcome {
        case .success(let new):
            FileHandle.standardOutput.write(Data("new \(new)\n".utf8))
            return 0
        case .failure(let error):
            FileHandle.standardError.write(Data("ingest probe: \(error)\n".utf8))
            return 1
        }
    }

    /// Every process computes the same delivery list and takes the positions `process`,
    /// `process + processes`, …; its tasks split that share the same way.
    static func deliveries(_ options: Options) -> [IngestionWorkload.Notification] {
        let notifications = IngestionWorkload.notifications(
            customers: options.customers, perCustomer: options.perCustomer)
        var all: [IngestionWorkload.Notification] = []
        for copy in 0..<options.copies {
            var generator = SeededOrder(state: options.seed &+ UInt64(copy))
            all += notifications.shuffled(using: &generator)
        }
        return stride(from: options.process, to: all.count, by: options.processes).map { all[$0] }
    }

    static func ingest(_ options: Options) async throws -> Int {
        let store = try await StoreLocation(options.database).open()
        let share = deliveries(options)
        let new = try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<options.tasks {
                let slice = stride(from: task, to: share.count, by: options.tasks).map { share[$0] }
                group.addTask {
                    var new = 0
                    for notification in slice where try await IngestionWorkload.ingest(notification, into: store) {
                        new += 1
                    }
                    return new
                }
            }
            return try await group.reduce(0, +)
        }
        await store.close()
        return new
    }

    /// SplitMix64, so every process derives the same orders from the seed.
    struct SeededOrder: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
