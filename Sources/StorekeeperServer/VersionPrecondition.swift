import Foundation
import HTTPServer

/// The `If-Match` precondition of a write to a versioned admin resource (an app, its catalog, a
/// webhook endpoint), checked against the version read under the row's lock in the same
/// transaction as the write (RFC 9110 §13.1.1).
///
/// The resource's `ETag` is its version as a strong entity tag, `"<version>"`. `If-Match: *`
/// holds whenever the resource exists; a list holds when one of its strong tags names the
/// current version (a weak tag `W/"…"` never matches, as the RFC's strong comparison says). A
/// stale version is 412 `version_mismatch`, naming the current version in its message and in
/// its `ETag` header; a field that is not a list of entity tags is 400 `invalid_if_match`.
/// Without `If-Match` the write applies to the current version.
/// - Note: Immutable value; `Sendable`.
struct VersionPrecondition: Sendable, Equatable {
    enum Condition: Sendable, Equatable {
        /// No `If-Match`: the write applies to whatever version is current.
        case none
        /// `If-Match: *`.
        case any
        /// The versions the strong tags name (others, weak or not ours, can never match).
        case versions([Int64])
    }

    let condition: Condition

    /// The longest `If-Match` read, and the most tags in it: bounded input.
    static let maximumLength = 1024
    static let maximumTags = 32

    /// The ETag of `version`.
    static func etag(_ version: Int64) -> String { "\"\(version)\"" }

    init(_ condition: Condition) { self.condition = condition }

    /// The precondition of `request`: its `If-Match` fields, taken as one list.
    init(_ request: HTTPRequest) throws {
        let fields = request.headers.values(for: "If-Match")
        guard !fields.isEmpty else {
            self.init(.none)
            return
        }
        self.init(try Self.parse(fields.joined(separator: ",")))
    }

    static func parse(_ field: String) throws -> Condition {
        let invalid = HTTPError.badRequest(
            "If-Match must be * or a list of entity tags such as \"3\" (the ETag this API answered).",
            code: "invalid_if_match")
        guard field.utf8.count <= maximumLength else { throw invalid }
        let trimmed = field.trimmingCharacters(in: .whitespaces)
        if trimmed == "*" { return .any }
        var versions: [Int64] = []
        var count = 0
        for member in trimmed.split(separator: ",", omittingEmptySubsequences: false) {
            var tag = Substring(member.trimmingCharacters(in: .whitespaces))
            // An empty list member is allowed by the list syntax (RFC 9110 §5.6.1).
            if tag.isEmpty { continue }
            count += 1
            guard count <= maximumTags else { throw invalid }
            let weak = tag.hasPrefix("W/")
            if weak { tag = tag.dropFirst(2) }
            guard tag.count >= 2, tag.hasPrefix("\""), tag.hasSuffix("\"") else { throw invalid }
            let opaque = tag.dropFirst().dropLast()
            // etagc: %x21 / %x23-7E / obs-text; no quote, no control characters, no space.
            guard opaque.unicodeScalars.allSatisfy({ $0 == "\u{21}" || ($0.value >= 0x23 && $0.value != 0x7F) })
            else { throw invalid }
            if !weak, let version = Int64(opaque), version >= 0, String(version) == opaque {
                versions.append(version)
            }
        }
        guard count > 0 else { throw invalid }
        return .versions(versions)
    }

    /// Throws 412 `version_mismatch` unless the precondition holds for `current`, the version of
    /// `resource` ("app", "catalog", "webhook endpoint") read under its lock.
    func check(current: Int64, resource: String) throws {
        switch condition {
        case .none, .any: return
        case .versions(let versions):
            guard !versions.contains(current) else { return }
            throw HTTPError(
                status: .preconditionFailed, code: "version_mismatch",
                message: "The \(resource) changed since the version If-Match names: its current version is "
                    + "\(current). Read it again and send If-Match: \"\(current)\".",
                headers: ["ETag": Self.etag(current)])
        }
    }
}
