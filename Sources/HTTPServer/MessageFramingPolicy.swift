import Foundation

/// How a request's body length is framed must be unambiguous (RFC 9112 §6): otherwise the
/// server and a proxy in front of it may disagree on where this request ends and the next
/// begins, and a request smuggled inside the body gets served.
///
/// Refused, each answered before the body is read and followed by closing the connection
/// (`MicroHTTPDCallbacks`), since what follows on the connection cannot be trusted:
/// - `Content-Length` together with `Transfer-Encoding`, in either order (§6.1, §6.3): 400.
/// - `Transfer-Encoding` in an HTTP/1.0 request (§6.1): 400.
/// - `Transfer-Encoding` whose final coding is not `chunked`, or `chunked` applied twice
///   (§6.1, §6.3): 400.
/// - Another transfer coding before `chunked` (libmicrohttpd decodes only chunked): 501.
/// - `Content-Length` fields or list members that disagree (§6.3): 400.
enum MessageFramingPolicy {
    static let refusalCode = "invalid_framing"
    static let unsupportedCodingCode = "unsupported_transfer_coding"

    /// The refusal for a request head, or nil when its framing is unambiguous.
    static func refusal(headers: HTTPHeaders, isHTTP10: Bool) -> HTTPError? {
        let lengths = headers.values(for: "Content-Length")
        let encodings = headers.values(for: "Transfer-Encoding")
        if !encodings.isEmpty {
            if !lengths.isEmpty {
                return .badRequest(
                    "A request may not carry both Content-Length and Transfer-Encoding.", code: refusalCode)
            }
            if isHTTP10 {
                return .badRequest("Transfer-Encoding is not allowed in an HTTP/1.0 request.", code: refusalCode)
            }
            let codings = encodings.flatMap { $0.split(separator: ",") }
                .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard codings.last == "chunked", codings.filter({ $0 == "chunked" }).count == 1 else {
                return .badRequest("Transfer-Encoding must end with chunked, once.", code: refusalCode)
            }
            if codings.count > 1 {
                return HTTPError(
                    status: .notImplemented, code: unsupportedCodingCode,
                    message: "Only the chunked transfer coding is supported.")
            }
        }
        guard lengths.count > 1 || lengths.first?.contains(",") == true else { return nil }
        let members = Set(
            lengths.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
                .map { $0.trimmingCharacters(in: .whitespaces) })
        if members.count > 1 {
            return .badRequest("Content-Length values disagree.", code: refusalCode)
        }
        return nil
    }
}
