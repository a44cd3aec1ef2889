import Foundation
import Synchronization
import Testing

@testable import Storage

/// Several writers opening a new SQLite file at once (instances starting together, as the
/// migration test does): SQLite refuses the switch to WAL with an immediate busy, without its
/// busy handler, in about one race in fifteen; each open must still succeed.
@Suite("SQLite open race")
struct SQLiteOpenRaceTests {
    @Test func fourWritersOpeningANewFileTogetherAllGetWAL() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("sk-open-race-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var failures: [String] = []
        for round in 0..<100 {
            let path = directory.appendingPathComponent("race-\(round).sqlite").path
            let outcomes = Self.openTogether(path: path, writers: 4)
            failures += outcomes.compactMap { $0 }
        }
        #expect(failures == [])
    }

    /// Opens `writers` connections to `path` from as many threads released at the same moment;
    /// the error text of each that failed, `nil` for each that opened.
    static func openTogether(path: String, writers: Int) -> [String?] {
        let start = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        let outcomes = OutcomeList(count: writers)
        for index in 0..<writers {
            group.enter()
            Thread.detachNewThread {
                start.wait()
                do {
                    let connection = try SQLiteConnection(path: path, readOnly: false, busyTimeoutMilliseconds: 5000)
                    connection.close()
                    outcomes.set(index, nil)
                } catch {
                    outcomes.set(index, "\(error)")
                }
                group.leave()
            }
        }
        for _ in 0..<writers { start.signal() }
        group.wait()
        return outcomes.values
    }
}

/// One slot per thread, each written once by its own thread before `group.wait()` returns.
private final class OutcomeList: Sendable {
    private let slots: Mutex<[String?]>
    init(count: Int) { slots = Mutex(Array(repeating: nil, count: count)) }
    func set(_ index: Int, _ value: String?) { slots.withLock { $0[index] = value } }
    var values: [String?] { slots.withLock { $0 } }
}
