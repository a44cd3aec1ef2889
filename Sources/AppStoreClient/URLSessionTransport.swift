import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `HTTPTransport` on Foundation's `URLSession`, with the body bounded while it streams in
/// (a response larger than the limit is cancelled, never buffered whole), redirects refused
/// (Apple's APIs do not redirect; following one would carry the bearer token elsewhere) and
/// no cookies or caches.
/// - Note: Thread-safe: per-task state sits behind a `Mutex` in the session delegate.
public final class URLSessionTransport: HTTPTransport {
    private let session: URLSession
    private let delegate: BoundedBodyDelegate

    public init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieAcceptPolicy = .never
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        delegate = BoundedBodyDelegate()
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    deinit { session.finishTasksAndInvalidate() }

    public func send(_ request: HTTPTransportRequest, maximumResponseBytes: Int) async throws(HTTPTransportFailure)
        -> HTTPTransportResponse
    {
        // URLSession always resolves the URL's host itself: it cannot keep a checked address.
        if request.connectAddress != nil {
            throw HTTPTransportFailure(.notConnected, "URLSession cannot connect to a given address")
        }
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        urlRequest.httpBody = request.body
        urlRequest.httpShouldHandleCookies = false
        let seconds = Double(request.timeout.components.seconds) + Double(request.timeout.components.attoseconds) / 1e18
        urlRequest.timeoutInterval = max(seconds, 0.001)
        for header in request.headers { urlRequest.addValue(header.value, forHTTPHeaderField: header.name) }

        let task = session.dataTask(with: urlRequest)
        let result: Result<HTTPTransportResponse, HTTPTransportFailure> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                delegate.register(task: task, limit: maximumResponseBytes, continuation: continuation)
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
        return try result.get()
    }
}

/// Collects each task's body up to its limit and completes its continuation exactly once.
/// - Note: `@unchecked Sendable`: all mutable state is inside `tasks`, a `Mutex`; URLSession
///   calls the delegate methods on its own serial queue.
private final class BoundedBodyDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private struct State {
        var limit: Int
        var body = Data()
        var tooLarge = false
        var continuation: CheckedContinuation<Result<HTTPTransportResponse, HTTPTransportFailure>, Never>
    }

    private let tasks = Mutex<[Int: State]>([:])

    func register(
        task: URLSessionTask, limit: Int,
        continuation: CheckedContinuation<Result<HTTPTransportResponse, HTTPTransportFailure>, Never>
    ) {
        tasks.withLock { $0[task.taskIdentifier] = State(limit: limit, continuation: continuation) }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let overLimit = tasks.withLock { states -> Bool in
            guard let limit = states[dataTask.taskIdentifier]?.limit else { return false }
            let declared = response.expectedContentLength
            if declared > Int64(limit) {
                states[dataTask.taskIdentifier]?.tooLarge = true
                return true
            }
            return false
        }
        completionHandler(overLimit ? .cancel : .allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let overLimit = tasks.withLock { states -> Bool in
            guard var state = states[dataTask.taskIdentifier] else { return false }
            if state.body.count + data.count > state.limit {
                state.tooLarge = true
                state.body = Data()
                states[dataTask.taskIdentifier] = state
                return true
            }
            state.body.append(data)
            states[dataTask.taskIdentifier] = state
            return false
        }
        if overLimit { dataTask.cancel() }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let state = tasks.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if state.tooLarge {
            state.continuation.resume(
                returning: .failure(
                    HTTPTransportFailure(
                        .responseTooLarge, "response body exceeds \(state.limit) bytes")))
            return
        }
        if let error {
            state.continuation.resume(returning: .failure(Self.classify(error)))
            return
        }
        guard let http = task.response as? HTTPURLResponse else {
            state.continuation.resume(returning: .failure(HTTPTransportFailure(.other, "response is not HTTP")))
            return
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            headers[String(describing: name).lowercased()] = String(describing: value)
        }
        state.continuation.resume(
            returning: .success(HTTPTransportResponse(status: http.statusCode, headers: headers, body: state.body)))
    }

    static func classify(_ error: any Error) -> HTTPTransportFailure {
        guard let urlError = error as? URLError else { return HTTPTransportFailure(.other, "\(type(of: error))") }
        let detail = "URLError \(urlError.code.rawValue)"
        switch urlError.code {
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
            .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected,
            .clientCertificateRequired:
            return HTTPTransportFailure(.notConnected, detail, isTLSFailure: true)
        case .cannotFindHost, .cannotConnectToHost, .dnsLookupFailed, .notConnectedToInternet, .badURL,
            .unsupportedURL:
            return HTTPTransportFailure(.notConnected, detail)
        case .timedOut: return HTTPTransportFailure(.timedOut, detail)
        case .networkConnectionLost, .badServerResponse: return HTTPTransportFailure(.connectionLost, detail)
        case .cancelled: return HTTPTransportFailure(.cancelled, detail)
        default:
            // On Linux every TLS failure (handshake, certificate) arrives as an unknown error with
            // libcurl's message, which names the TLS layer first ("SSL certificate problem: …",
            // "OpenSSL/3.0: error:…"); only that prefix is looked at, never passed on.
            let message = (urlError as NSError).localizedDescription
            let isTLS = ["SSL", "OpenSSL", "TLS"].contains { message.hasPrefix($0) }
            return HTTPTransportFailure(.other, detail, isTLSFailure: isTLS)
        }
    }
}
