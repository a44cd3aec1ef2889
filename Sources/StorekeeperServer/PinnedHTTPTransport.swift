import AppStoreClient
import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `HTTPTransport` on libcurl that connects exactly where its caller checked: every request
/// must carry `connectAddress`, and libcurl opens its connection to that address
/// (`CURLOPT_CONNECT_TO`, for any host and port) while the URL's host still names TLS SNI, the
/// certificate's name check and the `Host` header. Nothing resolves the name again, so a DNS
/// answer that changes after the check (rebinding) cannot move the connection. Webhook
/// delivery uses it for `http` and `https` alike.
///
/// Each request: a fresh libcurl handle (no connection reused across checked addresses), http
/// and https only, no redirect followed, no proxy whatever the environment says, no cookies or
/// `.netrc`, the peer's certificate and name verified (against `Settings.caBundlePath` when
/// set, else the system's trust store), a connect timeout and the request's total timeout, at
/// most `maximumResponseBytes` of body. A failure carries libcurl's error number only, never
/// its message (which may name addresses).
///
/// libcurl's easy interface blocks: each transfer runs on a thread of its own, never on the
/// cooperative pool nor on Dispatch's (on Linux, Dispatch adds a thread to a pool whose threads
/// all block only about once a second, so a few hanging endpoints delayed every other transfer
/// by a second each); callers bound how many run at once (the webhook deliverer's in-flight
/// limits). Cancelling the calling task aborts the transfer at
/// libcurl's next progress callback (at least once a second). Making one ignores `SIGPIPE` in
/// the process: with `CURLOPT_NOSIGNAL` (required when transfers run on several threads)
/// libcurl no longer shields OpenSSL's socket writes, and a peer closing during the handshake
/// would otherwise end the whole server; the write then fails with `EPIPE` instead.
/// - Note: Thread-safe: the settings are immutable and each transfer's state is its own.
public final class PinnedHTTPTransport: HTTPTransport {
    /// How connections are made.
    /// - Note: Immutable value; `Sendable`.
    public struct Settings: Sendable, Hashable {
        /// The longest the TCP connection and TLS handshake may take (never more than the
        /// request's own timeout).
        public var connectTimeout: Duration
        /// A PEM file of CA certificates trusted instead of the system's store (tests, private
        /// CAs); `nil`: the system's store.
        public var caBundlePath: String?

        public init(connectTimeout: Duration = .seconds(5), caBundlePath: String? = nil) {
            self.connectTimeout = connectTimeout
            self.caBundlePath = caBundlePath
        }
    }

    public let settings: Settings

    public init(settings: Settings = Settings()) {
        self.settings = settings
        _ = Self.ignoringBrokenPipes
    }

    private static let ignoringBrokenPipes: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

    public func send(_ request: HTTPTransportRequest, maximumResponseBytes: Int) async throws(HTTPTransportFailure)
        -> HTTPTransportResponse
    {
        let transfer = try CurlTransfer(
            request: request, maximumResponseBytes: maximumResponseBytes, settings: settings)
        let result: Result<HTTPTransportResponse, HTTPTransportFailure> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let thread = Thread { continuation.resume(returning: transfer.perform()) }
                thread.name = "storekeeper.pinned-http"
                thread.stackSize = 512 * 1024
                thread.start()
            }
        } onCancel: {
            transfer.cancel()
        }
        return try result.get()
    }
}
