import AppStoreModels
import AppStoreTrust
import Foundation
import HTTPServer
import Storage
import StorekeeperIngestion

/// Where the modules' errors become HTTP answers (STYLE 4: the status is chosen at the edge).
/// Messages carry stable codes and never secrets, tokens or SQL arguments.
/// - Note: Stateless; thread-safe.
enum ErrorMapping {
    /// An ingestion failure: its code and message as they are, with the status for the code.
    static func ingestionFailure(_ error: IngestionError) -> HTTPError {
        switch error.code {
        case .internal: return .internalError()
        case .notFound: return .notFound()
        default: break
        }
        var headers: HTTPHeaders = [:]
        if let seconds = error.retryAfterSeconds { headers["Retry-After"] = String(seconds) }
        return HTTPError(
            status: status(of: error.code), code: error.code.rawValue, message: error.message, headers: headers)
    }

    static func status(of code: IngestionError.Code) -> HTTPStatus {
        switch code {
        case .invalidJSON, .invalidBody, .unrecognizedNotification, .invalidNotification, .invalidTransaction,
            .environmentNotAccepted, .receiptInvalid, .verificationFailed:
            return .badRequest
        case .sharedSecretMismatch, .pushUnauthenticated: return .unauthorized
        case .customerNotFound, .transactionNotFound, .appNotFound, .notFound: return .notFound
        case .appNotConfigured, .appStoreNotConfigured, .googlePlayNotConfigured, .conflict, .duplicate:
            return .conflict
        case .verificationUnavailable, .appStoreUnavailable, .databaseUnavailable, .googlePlayUnavailable:
            return .serviceUnavailable
        case .rateLimited: return .tooManyRequests
        case .appStoreError, .appStoreDataRejected, .appStoreDataIncomplete, .googlePlayError: return .badGateway
        case .internal: return .internalServerError
        }
    }

    /// A store failure: 503 so that callers (Apple among them) retry; 409 for a lost version race
    /// or a duplicate; 404 for a missing row; 400 for a value no store can hold (a NUL in text).
    static func storeFailure(_ error: any Error) -> HTTPError {
        if let http = error as? HTTPError { return http }
        if let ingestion = error as? IngestionError { return ingestionFailure(ingestion) }
        guard error is StoreError else { return .internalError() }
        return ingestionFailure(IngestionError.store(error))
    }
}

/// Reading request bodies and query parameters.
/// - Note: Stateless; thread-safe.
enum RequestBody {
    /// Whether `text` holds a control character (Unicode `Cc`: C0, DEL, C1): no identifier holds
    /// one, and a NUL cannot even be stored.
    static func holdsControlCharacter(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

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
