import Foundation
import Testing

@testable import HTTPServer

/// The bookkeeping behind eviction and deadlines, with instants given by the test.
@Suite struct ConnectionTableTests {
    let start = ContinuousClock.now

    func table(
        threshold: Int = 100, headTimeout: Duration? = .seconds(2),
        bodyRate: HTTPServer.MinimumBodyRate? = HTTPServer.MinimumBodyRate(bytesPerSecond: 1000, grace: .seconds(1))
    ) -> ConnectionTable {
        ConnectionTable(
            policy: ConnectionTable.Policy(
                headTimeout: headTimeout, minimumBodyRate: bodyRate, evictionThreshold: threshold))
    }

    func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    /// The per-address limit closes a connection beyond it at once and counts the refusal; a
    /// closed connection gives its place back; other addresses are not affected.
    @Test func perAddressLimitRefusesAndCounts() {
        var table = ConnectionTable(
            policy: ConnectionTable.Policy(
                headTimeout: nil, minimumBodyRate: nil, evictionThreshold: 100, maxConnectionsPerAddress: 2))
        let one: [UInt8] = [127, 0, 0, 9]
        let other: [UInt8] = [127, 0, 0, 10]
        let a = table.open(socket: 10, address: one, at: at(0))
        let b = table.open(socket: 11, address: one, at: at(1))
        let refused = table.open(socket: 12, address: one, at: at(2))
        let elsewhere = table.open(socket: 13, address: other, at: at(3))
        #expect([a.close, b.close, refused.close, elsewhere.close] == [[], [], [12], []])
        #expect(
            table.statistics
                == HTTPServer.ConnectionStatistics(
                    open: 4, evicted: 0, headTimeouts: 0, slowBodies: 0, addressRefusals: 1))
        table.closed(refused.id)
        table.closed(a.id)
        #expect(table.open(socket: 14, address: one, at: at(4)).close == [])
        #expect(table.open(socket: 15, address: one, at: at(5)).close == [15])
        #expect(table.statistics.addressRefusals == 2)
        #expect(table.statistics.open == 4)
    }

    @Test func orderedIDSetKeepsAppendOrder() {
        var set = OrderedIDSet()
        for id: UInt64 in [5, 3, 9, 1] { set.append(id) }
        #expect(set.elements == [5, 3, 9, 1])
        let removed = set.remove(9)
        let removedAgain = set.remove(9)
        #expect(removed && !removedAgain)
        set.append(5)  // moves to the end
        #expect(set.elements == [3, 1, 5])
        #expect(set.first == 3)
        #expect(set.first(excluding: 3) == 1)
        for id: UInt64 in [3, 1, 5] { set.remove(id) }
        #expect(set.isEmpty && set.first == nil && set.elements.isEmpty)
    }

    @Test func evictsOldestIdleKeepAliveFirstThenOldestFreshNeverBusy() {
        var table = table(threshold: 4)
        let a = table.open(socket: 10, at: at(0))
        let b = table.open(socket: 11, at: at(1))
        let c = table.open(socket: 12, at: at(2))
        let d = table.open(socket: 13, at: at(3))
        #expect([a.close, b.close, c.close, d.close] == [[], [], [], []])
        // b, then a, finish a request and wait kept alive; d is busy.
        for id in [b.id, a.id, d.id] { table.headReceived(id, expectingBody: false, at: at(10)) }
        #expect(table.responded(b.id, at: at(20)) == [])
        #expect(table.responded(a.id, at: at(30)) == [])
        // Over the threshold: the idle ones go first, oldest waiting first (b, then a) …
        #expect(table.open(socket: 14, at: at(40)).close == [11])
        #expect(table.open(socket: 15, at: at(41)).close == [10])
        // … then the oldest connection still waiting for its first head (c), never busy d.
        let g = table.open(socket: 16, at: at(42))
        #expect(g.close == [12])
        #expect(
            table.statistics == HTTPServer.ConnectionStatistics(open: 7, evicted: 3, headTimeouts: 0, slowBodies: 0))
        // Connections being closed do not count: once libmicrohttpd closes them, nothing changes.
        for id in [a.id, b.id, c.id] { table.closed(id) }
        #expect(table.statistics.open == 4)
        #expect(!table.isCrowded)
    }

    @Test func aNewConnectionIsNeverItsOwnVictimAndBusyOnesAreKept() {
        var table = table(threshold: 1)
        let a = table.open(socket: 10, at: at(0))
        table.headReceived(a.id, expectingBody: false, at: at(1))
        // Only a busy connection and the new one: nothing to evict.
        let b = table.open(socket: 11, at: at(2))
        #expect(b.close == [])
        #expect(table.isCrowded)
        // The busy one finishing while crowded makes the room itself.
        #expect(table.responded(a.id, at: at(3)) == [10])
        #expect(!table.isCrowded)
    }

    /// The supervisor answers `isCrowded` from a flag it sets after each change to its table
    /// (not under the table's lock): the flag must follow opens, closes, responses and sweeps.
    @Test func theSupervisorsCrowdedFlagFollowsItsTable() {
        let supervisor = ConnectionSupervisor(
            policy: ConnectionTable.Policy(headTimeout: .seconds(2), minimumBodyRate: nil, evictionThreshold: 1))
        // Socket -1: nothing is shut down for real.
        let a = supervisor.opened(socket: -1, address: nil)
        #expect(!supervisor.isCrowded)
        supervisor.headReceived(a, expectingBody: false)
        let b = supervisor.opened(socket: -1, address: nil)
        #expect(supervisor.isCrowded)
        // A busy one finishing while crowded makes the room itself (it is closed).
        supervisor.responded(a)
        #expect(!supervisor.isCrowded)
        supervisor.closed(a)
        supervisor.headReceived(b, expectingBody: false)
        let c = supervisor.opened(socket: -1, address: nil)
        #expect(supervisor.isCrowded)
        supervisor.closed(c)
        #expect(!supervisor.isCrowded)
        // A sweep that expires a waiting connection uncrowds too: d waits for its head past the
        // deadline while b stays busy.
        let d = supervisor.opened(socket: -1, address: nil)
        #expect(supervisor.isCrowded)
        supervisor.sweep(at: .now + .seconds(3))
        #expect(!supervisor.isCrowded)
        supervisor.closed(d)
        #expect(supervisor.statistics.open == 1)
    }

    @Test func headDeadlineRunsFromAcceptOrFromThePreviousResponse() {
        var table = table(headTimeout: .seconds(2))
        let fresh = table.open(socket: 10, at: at(0))
        let kept = table.open(socket: 11, at: at(0))
        table.headReceived(kept.id, expectingBody: false, at: at(100))
        _ = table.responded(kept.id, at: at(1500))
        let done = table.open(socket: 12, at: at(0))
        table.headReceived(done.id, expectingBody: false, at: at(1999))
        #expect(table.expire(at: at(1999)) == [])
        #expect(table.expire(at: at(2000)) == [10])
        #expect(table.expire(at: at(3499)) == [])
        #expect(table.expire(at: at(3500)) == [11])
        #expect(table.expire(at: at(60_000)) == [])  // busy: never
        #expect(table.statistics.headTimeouts == 2)
        _ = fresh
    }

    @Test func bodyMustKeepTheMinimumRateAfterTheGrace() {
        var table = table(
            headTimeout: nil, bodyRate: HTTPServer.MinimumBodyRate(bytesPerSecond: 1000, grace: .seconds(1)))
        let slow = table.open(socket: 10, at: at(0))
        table.headReceived(slow.id, expectingBody: true, at: at(0))
        table.bodyReceived(slow.id, bytes: 500)  // allowed: 1 s + 0.5 s
        #expect(table.expire(at: at(1500)) == [])
        #expect(table.expire(at: at(1501)) == [10])
        // A complete body is no longer timed.
        let done = table.open(socket: 11, at: at(0))
        table.headReceived(done.id, expectingBody: true, at: at(0))
        table.bodyComplete(done.id)
        #expect(table.expire(at: at(60_000)) == [])
        #expect(table.statistics.slowBodies == 1)
    }

    @Test func withoutARateBodiesAreNotTracked() {
        var table = table(headTimeout: nil, bodyRate: nil)
        let a = table.open(socket: 10, at: at(0))
        table.headReceived(a.id, expectingBody: true, at: at(0))
        #expect(table.connections[a.id]?.phase == .busy)
        #expect(table.expire(at: at(3_600_000)) == [])
    }

    @Test func fileDescriptorBudgetRaisesTheSoftLimitOrRefuses() throws {
        #expect(try FileDescriptorBudget.softLimit(forConnectionLimit: 1000, soft: 1024, hard: 4096) == 1256)
        #expect(try FileDescriptorBudget.softLimit(forConnectionLimit: 1000, soft: 1256, hard: 4096) == nil)
        #expect(try FileDescriptorBudget.softLimit(forConnectionLimit: 1000, soft: 20_000, hard: 20_000) == nil)
        #expect(throws: HTTPServerError.self) {
            try FileDescriptorBudget.softLimit(forConnectionLimit: 5000, soft: 1024, hard: 4096)
        }
        do {
            _ = try FileDescriptorBudget.softLimit(forConnectionLimit: 5000, soft: 1024, hard: 4096)
        } catch {
            #expect(error.code == "config.fileDescriptors")
        }
    }
}
