import CSQLite
import Foundation
import Synchronization

/// The time of every statement the store's connections run, added up by statement text, for
/// finding what a workload spends its database time on (`sqliteStatementProfile`,
/// `scripts/bench-ingestion.sh` with `BENCH_STATEMENTS=1`). A CPU profile shows SQLite's
/// internals; this shows which of our statements they were for.
///
/// A statement is timed from its first step (`SQLITE_TRACE_STMT`) to its end
/// (`SQLITE_TRACE_PROFILE`: its last step or its reset) on the monotonic clock, so the time
/// includes our code between its steps (decoding the rows a query returns). (SQLite's own figure
/// comes from a clock in whole milliseconds; it is used only for a statement whose start was
/// not seen.) The texts are SQLite's (placeholders, never the bound values).
/// - Note: Thread-safe: the totals sit behind a `Mutex`; SQLite calls `began` and `ended` on the
///   thread of the connection that ran the statement. Addresses are kept as integers, never dereferenced.
final class SQLiteStatementProfile: Sendable {
    /// One statement text's totals.
    /// - Note: Immutable value; `Sendable`.
    struct Totals: Sendable, Hashable {
        var sql: String
        var count: Int
        var nanoseconds: Int64
    }

    private struct State {
        var totals: [Totals] = []
        var byText: [String: Int] = [:]
        /// The totals of each statement the connections keep prepared (`register`), by address:
        /// found without reading the text again. Other statements (`sqlite3_exec`'s, which
        /// SQLite frees itself, so their address may come back for another text) go by text.
        var byStatement: [UInt: Int] = [:]
        /// The monotonic instant each running statement began.
        var started: [UInt: UInt64] = [:]

        mutating func index(of sql: String) -> Int {
            if let index = byText[sql] { return index }
            totals.append(Totals(sql: sql, count: 0, nanoseconds: 0))
            byText[sql] = totals.count - 1
            return totals.count - 1
        }
    }

    private let state = Mutex(State())
    let path: String

    /// Totals to be written to the file at `path` (`write()`).
    init(path: String) {
        self.path = path
    }

    /// `statement` stays prepared until `forget(statement:)`: its runs are added up by address.
    func register(statement: OpaquePointer) {
        guard let text = sqlite3_sql(statement) else { return }
        let sql = String(cString: text)
        state.withLock { $0.byStatement[UInt(bitPattern: statement)] = $0.index(of: sql) }
    }

    /// Called before SQLite frees a registered statement.
    func forget(statement: OpaquePointer) {
        state.withLock { state in
            state.byStatement.removeValue(forKey: UInt(bitPattern: statement))
            state.started.removeValue(forKey: UInt(bitPattern: statement))
        }
    }

    /// `statement` began running (its first step; SQLite calls again for each trigger it runs,
    /// which does not restart it).
    func began(statement: OpaquePointer) {
        let now = Self.now()
        state.withLock { state in
            if state.started[UInt(bitPattern: statement)] == nil { state.started[UInt(bitPattern: statement)] = now }
        }
    }

    /// Adds one run of `statement` (a live `sqlite3_stmt`, SQLite's callback), which ended now;
    /// `sqliteNanoseconds` is SQLite's own figure.
    func ended(statement: OpaquePointer, sqliteNanoseconds: Int64) {
        let now = Self.now()
        let key = UInt(bitPattern: statement)
        state.withLock { state in
            let nanoseconds = state.started.removeValue(forKey: key).map { Int64(now &- $0) } ?? sqliteNanoseconds
            let index: Int
            if let registered = state.byStatement[key] {
                index = registered
            } else if let text = sqlite3_sql(statement) {
                index = state.index(of: String(cString: text))
            } else {
                return
            }
            state.totals[index].count += 1
            state.totals[index].nanoseconds += nanoseconds
        }
    }

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// Every statement text's totals, the costliest first.
    var totals: [Totals] {
        state.withLock { $0.totals }.sorted {
            $0.nanoseconds != $1.nanoseconds ? $0.nanoseconds > $1.nanoseconds : $0.sql < $1.sql
        }
    }

    /// Writes the totals to `path` as tab-separated lines with a header: total milliseconds,
    /// count, mean microseconds, and the statement on one line.
    func write() throws(StoreError) {
        var text = "total_ms\tcount\tmean_us\tstatement\n"
        for entry in totals {
            let total = Double(entry.nanoseconds) / 1e6
            let mean = Double(entry.nanoseconds) / 1e3 / Double(max(entry.count, 1))
            let oneLine = entry.sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            text += String(format: "%.3f\t%d\t%.1f\t", total, entry.count, mean) + oneLine + "\n"
        }
        do {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            throw StoreError(.invalidConfiguration, "cannot write the statement profile to \(path): \(error)")
        }
    }
}
