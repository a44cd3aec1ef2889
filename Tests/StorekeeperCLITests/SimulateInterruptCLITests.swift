import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 14: Ctrl-C (SIGINT) during `simulate run` stops before the next step, exits 130 and
/// says the scenario must be run again from its start (the simulator's state is in memory).
///
/// On the accelerated clock (one day a second) the second step waits three seconds of real
/// time; SIGINT is sent as soon as the progress shows the first step done, so it lands during
/// the second.
struct SimulateInterruptCLITests {
    static let scenario = """
        {"name": "interrupted", "clock": {"mode": "accelerated", "monthSeconds": 30},
         "app": {"bundleId": "com.example.interrupted", "appAppleId": 1, "products": [
           {"productId": "monthly", "kind": "autoRenewable", "groupId": "G1", "level": 1, "period": "P1M",
            "prices": [{"storefront": "USA", "currency": "USD", "price": 5990}]}]},
         "customers": [{"id": "alice"}],
         "steps": [
           {"action": "purchase", "customer": "alice", "productId": "monthly"},
           {"action": "advanceTime", "days": 3},
           {"action": "advanceTime", "days": 1}]}
        """

    @Test func interruptedScenarioStopsBeforeTheNextStep() async throws {
        let directory = try CLITests().temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("scenario.json")
        try Self.scenario.write(to: file, atomically: true, encoding: .utf8)
        let child = try ChildProcess(
            ["simulate", "run", "--data", directory.appendingPathComponent("simulator").path, file.path],
            in: directory)
        let deadline = ContinuousClock.now + .seconds(60)
        while !child.stderr.contains("scenario: 1/3"), child.process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        child.signal(SIGINT)
        #expect(try await child.exit() == (130, false), "\(child.stdout)\(child.stderr)")
        let lines = child.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(lines)")
        #expect(lines.first?.hasPrefix("scenario interrupted: simulator at http://127.0.0.1:") == true)
        #expect(lines.dropFirst().first?.hasPrefix("ok   1 purchase") == true, "\(lines)")
        #expect(Array(lines.suffix(2)) == ["ok   2 advanceTime", "2 passed, 0 failed"])
        let errors = child.stderr.split(separator: "\n").map(String.init)
        // Without a terminal: a line per tenth crossed, the interrupted total, how to go on.
        #expect(errors.count == 4, "\(errors)")
        #expect(errors.first?.wholeMatch(of: /scenario: 1\/3 \(33%\), \S+\/s, ETA \S+/) != nil, "\(errors)")
        #expect(errors.dropFirst().first?.wholeMatch(of: /scenario: 2\/3 \(66%\), \S+\/s, ETA \S+/) != nil)
        #expect(errors.dropLast().last?.wholeMatch(of: /scenario: 2\/3 \(66%\) \(interrupted\) in \S+, \S+\/s/) != nil)
        #expect(
            errors.last
                == "interrupted after step 2 of 3; the simulator keeps its state in memory only, so run the scenario "
                + "again from its start")
    }
}
