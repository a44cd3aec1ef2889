/// A request-target holds no control character: no byte below 0x20 and no DEL (0x7F).
///
/// RFC 9112 §3.2 builds the request-target from RFC 3986 URI characters, which are all visible
/// ASCII; a control character there is never legitimate. NUL matters most: libmicrohttpd hands
/// the target over as a C string, so `/customers/u1\0/../../admin/apps` would otherwise reach
/// the router as `/customers/u1`. The target's bytes up to the first NUL are what the C string
/// shows; its full length comes from where libmicrohttpd delimited it (see `MicroHTTPDCallbacks`),
/// and a difference between the two is a NUL.
enum RequestTargetPolicy {
    static let refusalCode = "invalid_request_target"

    /// The refusal for a target, or nil when it is acceptable.
    /// - Parameters:
    ///   - visible: the target up to its first NUL.
    ///   - visibleLength: its length in bytes as received (before any UTF-8 repair).
    ///   - delimitedLength: the target's length in bytes as the request line delimited it, when
    ///     known; longer than `visibleLength` means a NUL inside.
    static func refusal(visible: String.UTF8View, visibleLength: Int, delimitedLength: Int?) -> HTTPError? {
        if let delimitedLength, delimitedLength != visibleLength {
            return .badRequest("The request target contains a NUL byte.", code: refusalCode)
        }
        if visible.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            return .badRequest("The request target contains a control character.", code: refusalCode)
        }
        return nil
    }
}
