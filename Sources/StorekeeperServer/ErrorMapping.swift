import AppStoreClient
import AppStoreModels
import AppStoreTrust
import Foundation
import HTTPServer
import Storage

/// Where the modules' errors become HTTP answers (STYLE 4: the status is chosen at the edge).
/// Messages carry stable codes and never secrets, tokens or SQL arguments.
/// - Note: Stateless; thread-safe.
enum ErrorMapping {
    /// A store failure: 503 so that callers (Apple among them) retry; 409 for a lost version race.
    static func storeFailure(_ error: any Error) -> HTTPError {
        if let http = error as? HTTPError { return http }
        guard let store = error as? StoreError else { return .internalError() }
        switch store.code {
        case .versionConflict:
            return HTTPError(status: .conflict, code: "conflict", message: "A concurrent update won; try again.")
        case .duplicate:
            return HTTPError(status: .conflict, code: "duplicate", message: "That identifier is already in use.")
        case .notFound:
            return .notFound()
        default:
            return HTTPError(
                status: .serviceUnavailable, code: "database_unavailable",
                message: "The database could not complete the request (\(store.code.rawValue)); retry later.",
                headers: ["Retry-After": "5"])
        }
    }

    /// A signed payload the trust core refused: 400, or 503 when the check could not be made.
    static func trustFailure(_ error: TrustError) -> HTTPError {
        if error.category == .retryableVerificationFailure {
            return HTTPError(
                status: .serviceUnavailable, code: "verification_unavailable",
                message: "Verification could not be completed (\(error.rule.rawValue)); retry later.",
                headers: ["Retry-After": "30"])
        }
        if error.category == .invalidConfiguration {
            return HTTPError(
                status: .conflict, code: "app_not_configured",
                message: "The app cannot verify signed data yet (\(error.rule.rawValue)).")
        }
        return HTTPError(
            status: .badRequest, code: "verification_failed",
            message: "The signed payload failed verification (\(error.rule.rawValue)).")
    }

    /// An App Store Server API or verifyReceipt failure.
    static func appStoreFailure(_ error: AppStoreClientError) -> HTTPError {
        if error.isTransient {
            return HTTPError(
                status: .serviceUnavailable, code: "app_store_unavailable",
                message: "The App Store did not answer (\(error.code.rawValue)); retry later.",
                headers: ["Retry-After": "30"])
        }
        switch error.code {
        case .invalidConfiguration:
            // Nothing was asked of Apple: the app lacks what the call needs (an App Store
            // Connect key, a shared secret). The caller's configuration, not a gateway failure.
            return PurchaseIngestor.notConfigured
        case .receiptInvalid, .receiptBadRequest:
            return HTTPError(status: .badRequest, code: "receipt_invalid", message: "Apple refused the receipt.")
        case .apiError where error.httpStatus == 404:
            return HTTPError(
                status: .notFound, code: "transaction_not_found",
                message: "The App Store does not know that transaction.")
        default:
            return HTTPError(
                status: .badGateway, code: "app_store_error",
                message: "The App Store request failed (\(error.code.rawValue)).")
        }
    }
}

/// Reading request bodies and query parameters.
/// - Note: Stateless; thread-safe.
enum RequestBody {
    /// Decodes a JSON body: 415 unless `Content-Type` is JSON, 400 `invalid_json` for bytes that
    /// are not JSON, 400 `invalid_body` for JSON of the wrong shape.
    static func decode<T: Decodable>(_ type: T.Type, from request: HTTPRequest) throws -> T {
        try requireJSON(request)
        guard (try? JSONSerialization.jsonObject(with: request.body, options: [.fragmentsAllowed])) != nil else {
            throw HTTPError.badRequest("The body is not valid JSON.", code: "invalid_json")
        }
        do {
            return try JSONDecoder().decode(T.self, from: request.body)
        } catch let error as DecodingError {
            throw HTTPError.badRequest("The body does not match the schema: \(describe(error)).", code: "invalid_body")
        }
    }

    static func requireJSON(_ request: HTTPRequest) throws {
        let contentType = request.headers["Content-Type"]?.lowercased() ?? ""
        let mediaType = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard mediaType == "application/json" || (mediaType.hasPrefix("application/") && mediaType.hasSuffix("+json"))
        else {
            throw HTTPError(
                status: .unsupportedMediaType, code: "unsupported_media_type",
                message: "Send the body as application/json.")
        }
    }

    static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            keys.isEmpty
                ? "(root)" : keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context): return "missing \(path(context.codingPath + [key]))"
        case .typeMismatch(_, let context): return "wrong type at \(path(context.codingPath))"
        case .valueNotFound(_, let context): return "null at \(path(context.codingPath))"
        case .dataCorrupted(let context): return "invalid value at \(path(context.codingPath))"
        @unknown default: return "invalid"
        }
    }

    /// `?limit=` clamped to 1...500 (default 100); 400 for a non-integer.
    static func limit(_ request: HTTPRequest, default value: Int = 100) throws -> Int {
        guard let text = request.queryValue("limit") else { return value }
        guard let number = Int(text), number > 0 else {
            throw HTTPError.badRequest("limit must be a positive integer.", code: "invalid_query")
        }
        return min(number, 500)
    }

    /// `?cursor=` as the sequence to continue after; 400 when malformed.
    static func cursor(_ request: HTTPRequest) throws -> Int64? {
        guard let text = request.queryValue("cursor"), !text.isEmpty else { return nil }
        guard let number = Int64(text), number >= 0 else {
            throw HTTPError.badRequest("cursor is not one this server issued.", code: "invalid_query")
        }
        return number
    }
}

/// JSON responses with the project's canonical encoding (sorted keys, integer timestamps).
enum JSONResponse {
    static func make<T: Encodable>(_ value: T, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse.json(data: AppStoreJSON.encode(value), status: status)
    }
}
