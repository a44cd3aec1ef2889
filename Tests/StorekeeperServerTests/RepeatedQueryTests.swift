import Foundation
import StorekeeperTesting
import Testing

/// A declared query parameter given twice is refused: the first value used to count silently,
/// so a client or proxy appending `environment=Production` to a URL that had `Sandbox` got the
/// Sandbox answer (and the other order the Production one).
@Suite(.serialized) struct RepeatedQueryTests {
    @Test("a repeated declared query parameter is 400 invalid_query, on immediate and async routes alike")
    func repeatedDeclaredParameters() async throws {
        let harness = try await ServerHarness()
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        let customer = "/v1/apps/\(app.appId)/customers/alice"
        // Immediate (answered on the HTTP thread).
        for query in ["environment=Sandbox&environment=Production", "environment=Production&environment=Sandbox"] {
            let answer = try await harness.request("GET", "\(customer)?\(query)", key: app.publicKey)
            #expect(answer.status == 400, "\(query)")
            #expect(answer.errorCode == "invalid_query", "\(query)")
            #expect(
                (answer.json["error"] as? [String: Any])?["message"] as? String
                    == "environment is given more than once.")
        }
        let once = try await harness.request("GET", "\(customer)?environment=Sandbox", key: app.publicKey)
        #expect(once.status == 200)
        #expect(once.json["environment"] as? String == "Sandbox")
        // A parameter the route does not read may repeat: it changes nothing.
        let undeclared = try await harness.request("GET", "\(customer)?x=1&x=2", key: app.publicKey)
        #expect(undeclared.status == 200)
        // Async (on the task pool): the check comes before the handler's own answers.
        let events = try await harness.request("GET", "\(customer)/events?limit=1&limit=2", key: app.secretKey)
        #expect(events.status == 400)
        #expect(events.errorCode == "invalid_query")
        let eventsOnce = try await harness.request("GET", "\(customer)/events?limit=1", key: app.secretKey)
        #expect(eventsOnce.status == 404)
        #expect(eventsOnce.errorCode == "customer_not_found")
    }
}
