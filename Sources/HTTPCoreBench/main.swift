import Foundation
import HTTPServer

// The HTTP core alone, for scripts/bench-http.sh: no store, no application, no access log.
//
// usage: HTTPCoreBench [PORT]   (0 or none: an ephemeral port)
//
// Prints `listening PORT` on standard output once serving, then serves until SIGTERM/SIGINT:
//   GET /healthz        {"status":"ok"} from an immediate handler (on libmicrohttpd's thread)
//   GET /healthz/async  the same from an async handler (hop to the task pool)

let port = CommandLine.arguments.dropFirst().first.flatMap { UInt16($0) } ?? 0
let healthBody = Data(#"{"status":"ok"}"#.utf8)

var router = Router()
router.addImmediate(.get, "/healthz") { _, _ in .json(data: healthBody) }
router.get("/healthz/async") { _, _ in .json(data: healthBody) }

let configuration = HTTPServer.Configuration(host: "127.0.0.1", port: port)
let server: HTTPServer
do {
    server = try HTTPServer(configuration: configuration, responder: router.buildResponder())
} catch {
    FileHandle.standardError.write(Data("HTTPCoreBench: \(error)\n".utf8))
    exit(1)
}
FileHandle.standardOutput.write(Data("listening \(server.port)\n".utf8))
await server.runUntilShutdownSignal()
