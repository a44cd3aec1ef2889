import HTTPServer
import Storage
import StorekeeperIngestion
import Testing

@testable import StorekeeperServer

/// How a store failure reaches the client: retryable failures are 503 with Retry-After; a value
/// no store can hold comes from the request itself, so retrying it cannot help.
struct StoreErrorMappingTests {
    @Test("each store error code maps to the status and code a client can act on")
    func storeErrorsMapToStatuses() {
        var seen: [StoreError.Code: (Int, String, String?)] = [:]
        for code in StoreError.Code.allCases {
            let answer = ErrorMapping.storeFailure(StoreError(code, "detail"))
            seen[code] = (answer.status.code, answer.code, answer.headers["Retry-After"])
        }
        for code in StoreError.Code.allCases {
            let (status, errorCode, retryAfter) = seen[code]!
            switch code {
            case .versionConflict:
                #expect(status == 409 && errorCode == "conflict" && retryAfter == nil)
            case .duplicate:
                #expect(status == 409 && errorCode == "duplicate" && retryAfter == nil)
            case .notFound:
                #expect(status == 404 && errorCode == "not_found" && retryAfter == nil)
            case .unstorableValue:
                #expect(status == 400 && errorCode == "invalid_body" && retryAfter == nil)
            default:
                #expect(status == 503 && errorCode == "database_unavailable" && retryAfter == "5", "\(code)")
            }
        }
        let nul = ErrorMapping.storeFailure(StoreError(.unstorableValue, "detail"))
        #expect(nul.message == "A text value holds a NUL character, which cannot be stored.")
    }
}
