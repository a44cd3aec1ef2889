import AppStoreClient
import Foundation
import Synchronization

/// Answers requests from a script, one entry per request, and records what was sent.
final class ScriptedTransport: HTTPTransport {
    enum Step: Sendable {
        case respond(Int, String, headers: [String: String] = [:])
        case fail(HTTPTransportFailure.Kind)
    }

    private let state: Mutex<(steps: [Step], sent: [HTTPTransportRequest])>

    init(_ steps: [Step]) { state = Mutex((steps, [])) }

    var sent: [HTTPTransportRequest] { state.withLock { $0.sent } }

    func send(_ request: HTTPTransportRequest, maximumResponseBytes: Int) async throws(HTTPTransportFailure)
        -> HTTPTransportResponse
    {
        let step = state.withLock { state -> Step in
            state.sent.append(request)
            return state.steps.isEmpty ? .respond(500, "script exhausted") : state.steps.removeFirst()
        }
        switch step {
        case .respond(let status, let body, let headers):
            guard body.utf8.count <= maximumResponseBytes else {
                throw HTTPTransportFailure(.responseTooLarge, "over the limit")
            }
            return HTTPTransportResponse(status: status, headers: headers, body: Data(body.utf8))
        case .fail(let kind): throw HTTPTransportFailure(kind, "scripted")
        }
    }
}

/// Time that moves only when the retry loop sleeps (or a test advances it); sleeps are recorded.
final class SteppedClock: RetryClock {
    private let state: Mutex<(elapsed: Duration, sleeps: [Duration], wall: Date)>

    init(wall: Date = Date(timeIntervalSince1970: 1_714_557_600)) { state = Mutex((.zero, [], wall)) }

    var sleeps: [Duration] { state.withLock { $0.sleeps } }

    func advance(seconds: Double) {
        state.withLock {
            $0.elapsed += .milliseconds(Int64(seconds * 1000))
            $0.wall = $0.wall.addingTimeInterval(seconds)
        }
    }

    func monotonicNow() -> Duration { state.withLock { $0.elapsed } }
    func wallNow() -> Date { state.withLock { $0.wall } }
    func sleep(for duration: Duration) async throws {
        state.withLock {
            $0.sleeps.append(duration)
            $0.elapsed += duration
        }
    }
}
