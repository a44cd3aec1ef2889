import AppStoreClient
import CCurl
import Foundation
import Synchronization

/// One request through a libcurl easy handle, for `PinnedHTTPTransport`: the inputs checked
/// when it is made (scheme, address, method, header syntax, sizes), every option set on a
/// fresh handle, and the response as libcurl's callbacks hand it over.
/// - Note: `@unchecked Sendable` is safe: the response fields are written only by `perform()`
///   and the callbacks libcurl runs inside it, on that one thread, and read after it; the
///   inputs are immutable; `cancelled` is atomic.
final class CurlTransfer: @unchecked Sendable {
    /// The most request header fields, and the longest request body, accepted.
    static let maximumRequestHeaders = 64
    static let maximumRequestBodyBytes = 8 * 1024 * 1024
    /// The most bytes of response head read before giving up on the response.
    static let maximumResponseHeadBytes = 64 * 1024

    let url: String
    let method: String
    let headerLines: [String]
    let body: Data?
    /// `CURLOPT_CONNECT_TO`'s entry: any host and port go to the checked address and the URL's port.
    let connectTo: String
    let timeoutMilliseconds: Int
    let connectTimeoutMilliseconds: Int
    let caBundlePath: String?
    let limit: Int
    private let cancelled = Atomic(false)

    private var received = Data()
    private var responseHeaders: [String: String] = [:]
    private var responseHeadBytes = 0
    private var tooLarge = false

    init(request: HTTPTransportRequest, maximumResponseBytes: Int, settings: PinnedHTTPTransport.Settings)
        throws(HTTPTransportFailure)
    {
        let text = request.url.absoluteString
        guard let scheme = request.url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = request.url.host, !host.isEmpty, text.utf8.count <= 8192,
            !text.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7f })
        else { throw HTTPTransportFailure(.notConnected, "the URL must be an absolute http or https URL") }
        guard let address = request.connectAddress.flatMap(IPAddress.init) else {
            throw HTTPTransportFailure(.notConnected, "a checked address to connect to is required")
        }
        let port = request.url.port ?? (scheme == "https" ? 443 : 80)
        guard (1...65_535).contains(port) else { throw HTTPTransportFailure(.notConnected, "the port is out of range") }
        guard (1...16).contains(request.method.utf8.count), request.method.utf8.allSatisfy({ $0 >= 0x41 && $0 <= 0x5a })
        else { throw HTTPTransportFailure(.notConnected, "the method must be 1 to 16 upper-case letters") }
        guard request.headers.count <= Self.maximumRequestHeaders,
            request.headers.allSatisfy({ Self.isToken($0.name) && Self.isFieldValue($0.value) })
        else { throw HTTPTransportFailure(.notConnected, "a request header field is malformed") }
        guard (request.body?.count ?? 0) <= Self.maximumRequestBodyBytes else {
            throw HTTPTransportFailure(.notConnected, "the request body is too large")
        }
        url = text
        method = request.method
        // An empty `Expect:` keeps libcurl from waiting for `100 Continue` before larger bodies.
        headerLines = request.headers.map { "\($0.name): \($0.value)" } + ["Expect:"]
        body = request.body
        connectTo = "::\(address.urlHost):\(port)"
        let total = max(1, Self.milliseconds(request.timeout))
        timeoutMilliseconds = total
        connectTimeoutMilliseconds = min(total, max(1, Self.milliseconds(settings.connectTimeout)))
        caBundlePath = settings.caBundlePath
        limit = max(0, maximumResponseBytes)
    }

    /// Aborts the transfer at libcurl's next progress callback (or before it starts).
    func cancel() { cancelled.store(true, ordering: .relaxed) }

    /// libcurl's global state, set up once before the first handle (it is reference-counted,
    /// so FoundationNetworking's own initialization is unaffected).
    private static let globalInitialization: Bool = CCurl_global_init() == CURLE_OK

    /// Runs the transfer on the calling thread (blocking) and returns its outcome.
    func perform() -> Result<HTTPTransportResponse, HTTPTransportFailure> {
        if cancelled.load(ordering: .relaxed) { return .failure(HTTPTransportFailure(.cancelled, "cancelled")) }
        guard Self.globalInitialization, let handle = curl_easy_init() else {
            return .failure(HTTPTransportFailure(.other, "libcurl could not start a transfer"))
        }
        var headerList: UnsafeMutablePointer<curl_slist>?
        var connectList: UnsafeMutablePointer<curl_slist>?
        defer {
            curl_easy_cleanup(handle)
            curl_slist_free_all(headerList)
            curl_slist_free_all(connectList)
        }
        var configured = true
        func check(_ code: CURLcode) { if code != CURLE_OK { configured = false } }
        func append(_ list: inout UnsafeMutablePointer<curl_slist>?, _ line: String) {
            if let longer = curl_slist_append(list, line) { list = longer } else { configured = false }
        }
        for line in headerLines { append(&headerList, line) }
        append(&connectList, connectTo)

        check(CCurl_setopt_string(handle, CURLOPT_URL, url))
        check(CCurl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"))
        check(CCurl_setopt_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"))
        check(CCurl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0))
        // An empty proxy disables proxies, `https_proxy` and the like included; `*` bypasses any.
        check(CCurl_setopt_string(handle, CURLOPT_PROXY, ""))
        check(CCurl_setopt_string(handle, CURLOPT_NOPROXY, "*"))
        check(CCurl_setopt_list(handle, CURLOPT_CONNECT_TO, connectList))
        check(CCurl_setopt_long(handle, CURLOPT_NOSIGNAL, 1))
        check(CCurl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, connectTimeoutMilliseconds))
        check(CCurl_setopt_long(handle, CURLOPT_TIMEOUT_MS, timeoutMilliseconds))
        check(CCurl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1))
        check(CCurl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2))
        if let caBundlePath {
            check(CCurl_setopt_string(handle, CURLOPT_CAINFO, caBundlePath))
            check(CCurl_setopt_string(handle, CURLOPT_CAPATH, nil))
        }
        check(CCurl_setopt_long(handle, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1)))
        check(CCurl_setopt_offset(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(max(1, limit))))
        check(CCurl_setopt_list(handle, CURLOPT_HTTPHEADER, headerList))
        switch (method, body) {
        case ("GET", nil):
            check(CCurl_setopt_long(handle, CURLOPT_HTTPGET, 1))
        case ("HEAD", nil):
            check(CCurl_setopt_long(handle, CURLOPT_NOBODY, 1))
        case (_, let body?):
            check(CCurl_setopt_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)))
            if body.isEmpty {
                check(CCurl_setopt_string(handle, CURLOPT_COPYPOSTFIELDS, ""))
            } else {
                body.withUnsafeBytes { bytes in
                    check(
                        CCurl_setopt_pointer(
                            handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress)))
                }
            }
            if method != "POST" { check(CCurl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method)) }
        case (_, nil):
            check(CCurl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method))
        }

        // The callbacks find this transfer through their context pointer; it outlives the call.
        let context = Unmanaged.passUnretained(self).toOpaque()
        check(
            CCurl_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION) { data, size, count, context in
                guard let context else { return 0 }
                return Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue().receiveBody(data, size, count)
            })
        check(CCurl_setopt_pointer(handle, CURLOPT_WRITEDATA, context))
        check(
            CCurl_setopt_data_callback(handle, CURLOPT_HEADERFUNCTION) { data, size, count, context in
                guard let context else { return 0 }
                return Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue().receiveHeader(
                    data, size, count)
            })
        check(CCurl_setopt_pointer(handle, CURLOPT_HEADERDATA, context))
        check(
            CCurl_setopt_progress_callback(handle) { context, _, _, _, _ in
                guard let context else { return 1 }
                return Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue().cancelled.load(
                    ordering: .relaxed) ? 1 : 0
            })
        check(CCurl_setopt_pointer(handle, CURLOPT_XFERINFODATA, context))
        check(CCurl_setopt_long(handle, CURLOPT_NOPROGRESS, 0))
        guard configured else { return .failure(HTTPTransportFailure(.other, "libcurl refused an option")) }

        let code = curl_easy_perform(handle)
        guard code == CURLE_OK else {
            return .failure(
                Self.failure(code, tooLarge: tooLarge, cancelled: cancelled.load(ordering: .relaxed)))
        }
        var status = 0
        guard CCurl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK, (100...999).contains(status)
        else { return .failure(HTTPTransportFailure(.connectionLost, "the answer had no HTTP status")) }
        return .success(HTTPTransportResponse(status: status, headers: responseHeaders, body: received))
    }

    /// libcurl's write callback: keeps the body up to the limit. Returning less than was
    /// given makes libcurl stop with `CURLE_WRITE_ERROR`.
    private func receiveBody(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int) -> Int {
        let (length, overflow) = size.multipliedReportingOverflow(by: count)
        guard !overflow, let data else { return 0 }
        guard received.count + length <= limit else {
            tooLarge = true
            received = Data()
            return 0
        }
        received.append(UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self), count: length)
        return length
    }

    /// libcurl's header callback: one line at a time, the status line included. A new status
    /// line (after `100 Continue`) starts the head over.
    private func receiveHeader(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int) -> Int {
        let (length, overflow) = size.multipliedReportingOverflow(by: count)
        guard !overflow, let data else { return 0 }
        responseHeadBytes += length
        guard responseHeadBytes <= Self.maximumResponseHeadBytes else {
            tooLarge = true
            return 0
        }
        let bytes = UnsafeRawBufferPointer(start: data, count: length)
        let line = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if line.hasPrefix("HTTP/") {
            responseHeaders = [:]
        } else if let colon = line.firstIndex(of: ":") {
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if !name.isEmpty && responseHeaders[name] == nil { responseHeaders[name] = value }
        }
        return length
    }

    /// What a libcurl error means for the caller: whether the request may have been seen, and
    /// whether TLS refused the peer. Only the error number is kept.
    static func failure(_ code: CURLcode, tooLarge: Bool, cancelled: Bool) -> HTTPTransportFailure {
        let detail = "libcurl error \(code.rawValue)"
        if tooLarge || code == CURLE_FILESIZE_EXCEEDED { return HTTPTransportFailure(.responseTooLarge, detail) }
        switch code {
        case CURLE_ABORTED_BY_CALLBACK:
            return HTTPTransportFailure(cancelled ? .cancelled : .other, detail)
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT:
            return HTTPTransportFailure(.notConnected, detail)
        case CURLE_OPERATION_TIMEDOUT:
            return HTTPTransportFailure(.timedOut, detail)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED,
            CURLE_SSL_ENGINE_INITFAILED, CURLE_USE_SSL_FAILED:
            return HTTPTransportFailure(.notConnected, detail, isTLSFailure: true)
        case CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_WEIRD_SERVER_REPLY,
            CURLE_HTTP2, CURLE_HTTP2_STREAM:
            return HTTPTransportFailure(.connectionLost, detail)
        default:
            return HTTPTransportFailure(.other, detail)
        }
    }

    /// An HTTP field name: a token (RFC 9110 §5.6.2), at most 256 bytes.
    static func isToken(_ name: String) -> Bool {
        (1...256).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)
                    || "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
    }

    /// A field value without CR, LF or NUL (which would split or end the header), at most 8 KiB.
    static func isFieldValue(_ value: String) -> Bool {
        value.utf8.count <= 8192 && !value.utf8.contains { $0 == 0x0d || $0 == 0x0a || $0 == 0 }
    }

    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        if overflow || seconds < 0 { return seconds < 0 ? 0 : Int.max / 2 }
        return Int(clamping: scaled + attoseconds / 1_000_000_000_000_000)
    }
}
