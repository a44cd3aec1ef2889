import Foundation
import HTTPServer
import Synchronization

/// A webhook endpoint on 127.0.0.1 that records when each request started and ended, by event
/// id (`Storekeeper-Event-Id`, named `<customer>/<index>` by these tests), and answers as the
/// test says: the many-instances tests' witness of order, overlap and at-least-once.
final class WebhookTimeline: Sendable {
    /// One request as the endpoint saw it.
    struct Request: Sendable {
        var eventId: String
        var start: ContinuousClock.Instant
        var end: ContinuousClock.Instant?
        var status: Int

        var customer: String { String(eventId.split(separator: "/").first ?? "") }
        var index: Int { Int(eventId.split(separator: "/").last ?? "") ?? -1 }
        var succeeded: Bool { (200..<300).contains(status) && end != nil }
    }

    /// How to answer: after `delay`, with `status`.
    struct Answer: Sendable {
        var delay: Duration = .zero
        var status: Int = 200
    }

    /// The requests so far.
    /// - Note: Thread-safe: behind a `Mutex`.
    final class Log: Sendable {
        let requests = Mutex<[Request]>([])
    }

    let server: HTTPServer
    let log = Log()

    /// `answer` gets the event id and how many requests for it came before this one.
    init(answer: @escaping @Sendable (_ eventId: String, _ earlier: Int) -> Answer) throws {
        let log = self.log
        server = try HTTPServer(
            configuration: HTTPServer.Configuration(host: "127.0.0.1", port: 0, threadPoolSize: 4)
        ) { request in
            let eventId = request.headers["Storekeeper-Event-Id"] ?? "?"
            let start = ContinuousClock.now
            let (position, earlier) = log.requests.withLock { requests in
                let earlier = requests.filter { $0.eventId == eventId }.count
                requests.append(Request(eventId: eventId, start: start, end: nil, status: 0))
                return (requests.count - 1, earlier)
            }
            let answer = answer(eventId, earlier)
            if answer.delay > .zero { try? await Task.sleep(for: answer.delay) }
            log.requests.withLock { requests in
                requests[position].end = ContinuousClock.now
                requests[position].status = answer.status
            }
            return HTTPResponse(status: HTTPStatus(answer.status))
        }
    }

    var url: String { server.baseURL.absoluteString + "/hook" }
    var requests: [Request] { log.requests.withLock { $0 } }
    var inFlight: Int { log.requests.withLock { $0.filter { $0.end == nil }.count } }
    func stop() async { await server.stop() }

    /// Whether every event in `expected` has been answered 2xx.
    func allSucceeded(_ expected: [String: [String]]) -> Bool {
        let succeeded = Set(requests.filter(\.succeeded).map(\.eventId))
        return expected.values.allSatisfy { $0.allSatisfy(succeeded.contains) }
    }

    /// Requests of one customer that were in flight at the same time (one event's included).
    func overlaps() -> [(Request, Request)] {
        var found: [(Request, Request)] = []
        let now = ContinuousClock.now
        for (_, own) in Dictionary(grouping: requests, by: \.customer) {
            let sorted = own.sorted { $0.start < $1.start }
            for (index, request) in sorted.enumerated() {
                for later in sorted[(index + 1)...] where later.start < (request.end ?? now) {
                    found.append((request, later))
                }
            }
        }
        return found
    }

    /// What breaks per-customer order: a request for a customer's event `j` that started before
    /// a 2xx answer to each of its events `0..<j` (in `expected`, commit order) had ended.
    func orderViolations(_ expected: [String: [String]]) -> [String] {
        var violations: [String] = []
        let byCustomer = Dictionary(grouping: requests, by: \.customer)
        for (customer, events) in expected {
            let own = byCustomer[customer] ?? []
            for request in own {
                guard let position = events.firstIndex(of: request.eventId) else {
                    violations.append("\(request.eventId) was never committed")
                    continue
                }
                for earlier in events[..<position] {
                    let answered = own.contains { $0.eventId == earlier && $0.succeeded && $0.end! <= request.start }
                    if !answered { violations.append("\(request.eventId) started before \(earlier) was answered") }
                }
            }
        }
        return violations
    }
}
