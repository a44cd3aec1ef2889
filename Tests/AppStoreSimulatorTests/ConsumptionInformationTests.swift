import AppStoreModels
import AppStoreSimulator
import Foundation
import HTTPServer
import Testing

/// Send Consumption Information v2 is checked against Apple's rules (fields, ranges, the v2
/// shape) before it is recorded: an invalid body is refused with Apple's error and leaves
/// nothing recorded.
@Suite struct ConsumptionInformationTests {
    func put(_ fixture: SimulatorFixture, _ transactionId: String, _ body: String) async throws -> HTTPResponse {
        let responder = SimulatorServer.responder(mounts: [("", fixture.simulator)])
        let token = try fixture.token()
        let headers: HTTPHeaders = ["Authorization": "Bearer " + token, "Content-Type": "application/json"]
        return await responder.respond(
            to: HTTPRequest(
                method: .put, target: "/inApps/v2/transactions/consumption/\(transactionId)", headers: headers,
                body: Data(body.utf8)))
    }

    func errorCode(_ response: HTTPResponse) -> Int64? {
        (try? AppStoreJSON.decode(ErrorPayload.self, from: response.body))?.errorCode?.rawValue
    }

    @Test func refusesBodiesAgainstApplesRules() async throws {
        let fixture = try await SimulatorFixture()
        let coins = try #require(try await fixture.act(.purchase, "alice", "coins").transactionId)
        let yearly = try #require(try await fixture.act(.purchase, "bob", "yearly").transactionId)
        let valid = #""customerConsented":true,"deliveryStatus":"DELIVERED","sampleContentProvided":false"#
        let refused: [(transaction: String, body: String, code: Int64)] = [
            (coins, "[]", 4_000_000),
            (
                coins, #"{"customerConsented":false,"deliveryStatus":"DELIVERED","sampleContentProvided":false}"#,
                4_000_035
            ),
            (coins, #"{"deliveryStatus":"DELIVERED","sampleContentProvided":false}"#, 4_000_035),
            (coins, #"{"customerConsented":true,"sampleContentProvided":false}"#, 4_000_036),
            (coins, #"{"customerConsented":true,"deliveryStatus":"LOST","sampleContentProvided":false}"#, 4_000_036),
            (coins, #"{"customerConsented":true,"deliveryStatus":"DELIVERED"}"#, 4_000_041),
            (coins, "{\(valid),\"consumptionPercentage\":100001}", 4_000_000),
            (coins, "{\(valid),\"consumptionPercentage\":-1}", 4_000_000),
            (coins, "{\(valid),\"consumptionPercentage\":50.5}", 4_000_000),
            (coins, "{\(valid),\"refundPreference\":\"MAYBE\"}", 4_000_044),
            // The v1 shape (consumptionStatus, platform, playTime …) is not v2.
            (coins, "{\(valid),\"consumptionStatus\":1}", 4_000_000),
            // GRANT_PRORATED: a percentage above 0 for anything but an auto-renewable
            // subscription, none for one (Apple computes it).
            (coins, "{\(valid),\"refundPreference\":\"GRANT_PRORATED\"}", 4_000_000),
            (coins, "{\(valid),\"refundPreference\":\"GRANT_PRORATED\",\"consumptionPercentage\":0}", 4_000_000),
            (yearly, "{\(valid),\"refundPreference\":\"GRANT_PRORATED\",\"consumptionPercentage\":5000}", 4_000_000),
        ]
        for (transaction, body, code) in refused {
            let response = try await put(fixture, transaction, body)
            #expect(response.status.code == 400, "\(body)")
            #expect(errorCode(response) == code, "\(body)")
        }
        #expect(await fixture.simulator.consumptionInformation(transactionId: coins) == nil)
        #expect(await fixture.simulator.consumptionInformation(transactionId: yearly) == nil)

        let accepted: [(transaction: String, body: String)] = [
            (coins, "{\(valid),\"refundPreference\":\"GRANT_PRORATED\",\"consumptionPercentage\":100000}"),
            (yearly, "{\(valid),\"refundPreference\":\"GRANT_PRORATED\"}"),
        ]
        for (transaction, body) in accepted {
            let response = try await put(fixture, transaction, body)
            #expect(response.status.code == 202, "\(body)")
            let recorded = await fixture.simulator.consumptionInformation(transactionId: transaction)
            #expect(recorded.map { String(decoding: $0, as: UTF8.self) } == body)
        }
    }
}
