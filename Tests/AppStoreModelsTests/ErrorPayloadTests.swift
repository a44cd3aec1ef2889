import AppStoreModels
import Foundation
import Testing

/// Apple's error bodies decode to the typed error (or keep an unknown code raw).
@Suite(.enabled(if: Corpus.isAvailable, Corpus.missingMessage))
struct ErrorPayloadCorpusTests {
    @Test(arguments: [
        (
            "apiException.json", Int64(5_000_000), APIError.generalInternal as APIError?,
            "An unknown error occurred."
        ),
        ("apiTooManyRequestsException.json", 4_290_000, .rateLimitExceeded, "Rate limit exceeded."),
        ("apiUnknownError.json", 9_990_000, nil, "Testing error."),
        ("invalidTransactionIdError.json", 4_000_006, .invalidTransactionId, "Invalid transaction id."),
        (
            "transactionIdNotFoundError.json", 4_040_010, .transactionIdNotFound,
            "Transaction id not found."
        ),
        (
            "appTransactionDoesNotExistError.json", 4_040_019, .appTransactionDoesNotExist,
            "No AppTransaction exists for the customer."
        ),
        (
            "invalidAppAccountTokenUUIDError.json", 4_000_183, .invalidAppAccountTokenUUID,
            "Invalid request. The app account token field must be a valid UUID."
        ),
        (
            "familyTransactionNotSupportedError.json", 4_000_185, .familyTransactionNotSupported,
            "Invalid request. Family Sharing transactions aren't supported by this endpoint."
        ),
        (
            "transactionIdNotOriginalTransactionId.json", 4_000_187,
            .transactionIdIsNotOriginalTransactionId,
            "Invalid request. The transaction ID provided is not an original transaction ID."
        ),
    ])
    func errorBody(file: String, code: Int64, typed: APIError?, message: String) throws {
        let payload = try decodeLosslessly(ErrorPayload.self, Corpus.model(file))
        #expect(payload.errorCode?.rawValue == code)
        #expect(payload.errorCode?.value == typed)
        #expect(payload.errorMessage == message)
    }
}

struct APIErrorTests {
    @Test func everyCaseHasAnAppleShapedCodeAndUniqueValue() {
        #expect(APIError.allCases.count >= 94)
        #expect(Set(APIError.allCases.map(\.rawValue)).count == APIError.allCases.count)
        for error in APIError.allCases {
            #expect([400, 403, 404, 409, 429, 500].contains(error.httpStatus), "\(error)")
        }
    }

    /// The codes added from Apple's error objects (App Store Server API and Retention Messaging API).
    @Test(arguments: [
        (Int64(4_000_004), APIError.invalidLimit),
        (4_000_044, .invalidRefundPreference),
        (4_000_209, .consumptionPercentageAutoRenewableSubscription),
        (4_000_211, .invalidPerformanceTestRequest),
        (4_000_212, .invalidRequestId),
        (4_000_213, .existingPerformanceTestRun),
        (4_000_215, .badRequestRealtimeUrl),
        (4_000_216, .badRequestImageSize),
        (4_000_218, .badRequestTooManyBulletPoints),
        (4_000_219, .badRequestBulletPointTextTooLong),
        (4_000_224, .badRequestAboveImageRequiresAnImage),
        (4_000_225, .invalidGroupId),
        (4_030_026, .forbiddenNoPassingTest),
        (4_030_028, .assignedSubscriptionExtensionIneligible),
        (4_040_018, .performanceTestRunNotFound),
        (4_040_020, .defaultMessageNotFound),
        (4_040_021, .realtimeUrlNotFound),
        (4_040_022, .groupNotFound),
    ])
    func addedCodeDecodesTyped(code: Int64, typed: APIError) throws {
        #expect(typed.rawValue == code)
        #expect(APIError(rawValue: code) == typed)
        #expect(!typed.isRetryable)
        let payload = try AppStoreJSON.decode(ErrorPayload.self, from: #"{"errorCode":\#(code)}"#.utf8Data)
        #expect(payload.errorCode?.value == typed)
        #expect(payload.errorCode?.rawValue == code)
    }

    @Test func retryableCodesAreApplesRetryableOnes() {
        let retryable = Set(APIError.allCases.filter(\.isRetryable).map(\.rawValue))
        #expect(retryable == [4_040_002, 4_040_004, 4_040_006, 5_000_001])
        #expect(APIError.rateLimitExceeded.isRateLimit)
        #expect(!APIError.generalBadRequest.isRateLimit)
        #expect(ErrorPayload(errorCode: RawEnum(.generalInternalRetryable)).isRetryable)
        #expect(!ErrorPayload(errorCode: RawEnum(rawValue: 4_040_099)).isRetryable)
    }

    @Test func typedRawRoundTripAndUnknown() throws {
        let known = try AppStoreJSON.decode(
            ErrorPayload.self, from: #"{"errorCode":4040010,"errorMessage":"x"}"#.utf8Data)
        #expect(known.errorCode == .transactionIdNotFound)
        #expect(known.errorCode?.rawValue == 4_040_010)
        #expect(try reencoded(known) == known)
        #expect(APIError.transactionIdNotFound.httpStatus == 404)
        let future = try AppStoreJSON.decode(
            ErrorPayload.self, from: #"{"errorCode":4040099}"#.utf8Data)
        #expect(future.errorCode?.value == nil)
        #expect(future.errorCode?.rawValue == 4_040_099)
        #expect(
            String(decoding: AppStoreJSON.encode(future), as: UTF8.self) == #"{"errorCode":4040099}"#)
    }
}
