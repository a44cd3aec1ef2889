import Foundation
import HTTPServer

/// The dashboard's side of HTTP: cookies in and out, `application/x-www-form-urlencoded`
/// bodies, and HTML responses with the headers every page carries.
/// - Note: Stateless; thread-safe.
enum DashboardHTTP {
    /// Form bodies past this size are refused before they are parsed.
    static let maximumFormBytes = 8 * 1024

    /// The named cookie's value from `Cookie` (the first one of that name).
    static func cookie(_ name: String, in request: HTTPRequest) -> String? {
        for header in request.headers.values(for: "Cookie") {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name else { continue }
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    /// A `Set-Cookie` value: HttpOnly and SameSite=Strict always, Secure when asked, scoped to
    /// the dashboard's paths; `maxAgeSeconds` 0 deletes it.
    static func setCookie(name: String, value: String, maxAgeSeconds: Int, secure: Bool) -> String {
        "\(name)=\(value); Path=/dashboard; Max-Age=\(maxAgeSeconds); HttpOnly; SameSite=Strict"
            + (secure ? "; Secure" : "")
    }

    /// The fields of a form body (decoded; repeated names keep their first value).
    static func form(_ request: HTTPRequest) throws(DashboardFailure) -> [String: String] {
        let type = request.headers["Content-Type"]?.lowercased() ?? ""
        guard type.hasPrefix("application/x-www-form-urlencoded") else {
            throw DashboardFailure(status: .unsupportedMediaType, message: "This form must be sent as a web form.")
        }
        guard request.body.count <= maximumFormBytes, let text = String(data: request.body, encoding: .utf8) else {
            throw DashboardFailure(status: .badRequest, message: "The form is too large or not UTF-8.")
        }
        // The form encoding is the query string's: the HTTP core's decoder reads it.
        let parsed = HTTPRequest(method: .post, path: "/", query: text)
        var fields: [String: String] = [:]
        for item in parsed.queryItems where fields[item.name] == nil { fields[item.name] = item.value ?? "" }
        return fields
    }

    /// A complete HTML page with the dashboard's headers: no caching, no framing, and a
    /// content security policy that allows nothing but this server's stylesheet (no script).
    static func page(_ html: HTML, status: HTTPStatus = .ok) -> HTTPResponse {
        var response = HTTPResponse(status: status, body: Data(html.markup.utf8))
        response.headers["Content-Type"] = "text/html; charset=utf-8"
        secure(&response)
        return response
    }

    /// 303 See Other to `location` (a path of this server).
    static func redirect(_ location: String, cookies: [String] = []) -> HTTPResponse {
        var response = HTTPResponse(status: 303)
        response.headers["Location"] = location
        for cookie in cookies { response.headers.add(name: "Set-Cookie", value: cookie) }
        secure(&response)
        return response
    }

    static func secure(_ response: inout HTTPResponse) {
        response.headers["Cache-Control"] = "no-store"
        response.headers["Content-Security-Policy"] =
            "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
            + "frame-ancestors 'none'; base-uri 'none'"
        response.headers["X-Content-Type-Options"] = "nosniff"
        // Not `no-referrer`: under it Chrome posts forms with `Origin: null`, which hides the
        // origin `DashboardController.checkOrigin` compares. `same-origin` still sends nothing
        // to other sites.
        response.headers["Referrer-Policy"] = "same-origin"
        response.headers["X-Frame-Options"] = "DENY"
    }

    /// `value` percent-encoded for a query string or path segment.
    static func encode(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    /// `path?name=value&…` with every value encoded; empty values left out.
    static func link(_ path: String, _ query: [(String, String?)]) -> String {
        let items = query.compactMap { name, value -> String? in
            guard let value, !value.isEmpty else { return nil }
            return name + "=" + encode(value)
        }
        return items.isEmpty ? path : path + "?" + items.joined(separator: "&")
    }
}

/// A request the dashboard answers with an error page (status and a message for people).
/// - Note: Immutable value; `Sendable`.
struct DashboardFailure: Error, Sendable {
    var status: HTTPStatus
    var message: String
}
