import Foundation

/// One line of the structured access log: what was asked, which route answered, how, how fast.
///
/// By construction it carries no body, no header values (so never `Authorization`), no query
/// string and no raw path: only the route *pattern*, so path parameters (which may be ids or
/// tokens) stay out of logs.
/// - Note: Immutable value; `Sendable`.
public struct AccessLogEntry: Sendable, Equatable {
    public var method: String
    /// The matched route pattern, e.g. `/v1/customers/{id}`; `nil` when no route matched
    /// (404, 405, 400 for a bad path) or the server core answered itself (413, 503).
    public var route: String?
    public var status: Int
    public var duration: Duration
    public var requestID: String

    public init(method: String, route: String?, status: Int, duration: Duration, requestID: String) {
        self.method = method
        self.route = route
        self.status = status
        self.duration = duration
        self.requestID = requestID
    }

    /// Milliseconds, fractional.
    public var durationMilliseconds: Double {
        duration / .milliseconds(1)
    }

    /// The entry as one line of JSON with a constant `event` and the data in keys:
    /// `{"duration_ms":1.25,"event":"http.access","method":"GET","request_id":"…","route":"…","status":200}`.
    public var jsonLine: String {
        struct Line: Encodable {
            let method: String
            let route: String?
            let status: Int
            let durationMilliseconds: Double
            let requestID: String

            enum CodingKeys: String, CodingKey {
                case event, method, route, status
                case durationMilliseconds = "duration_ms"
                case requestID = "request_id"
            }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode("http.access", forKey: .event)
                try container.encode(method, forKey: .method)
                try container.encode(route, forKey: .route)  // explicit null when unmatched
                try container.encode(status, forKey: .status)
                try container.encode(durationMilliseconds, forKey: .durationMilliseconds)
                try container.encode(requestID, forKey: .requestID)
            }
        }
        let rounded = (durationMilliseconds * 1000).rounded() / 1000
        let line = Line(
            method: method, route: route, status: status, durationMilliseconds: rounded, requestID: requestID)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(line), let text = String(data: data, encoding: .utf8) else {
            return #"{"event":"http.access"}"#
        }
        return text
    }
}

/// Receives one `AccessLogEntry` per answered request. Called on the thread that finished the
/// request; must be fast and thread-safe.
public typealias AccessLogger = @Sendable (AccessLogEntry) -> Void

/// Ready-made access loggers.
/// - Note: Stateless; the returned loggers are thread-safe.
public enum AccessLog {
    /// Writes each entry's `jsonLine` plus a newline to standard error in one `write(2)`.
    public static func standardError() -> AccessLogger {
        { entry in
            let line = Array((entry.jsonLine + "\n").utf8)
            line.withUnsafeBytes { buffer in
                _ = write(FileHandle.standardError.fileDescriptor, buffer.baseAddress, buffer.count)
            }
        }
    }
}
