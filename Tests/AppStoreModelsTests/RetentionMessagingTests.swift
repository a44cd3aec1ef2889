import AppStoreModels
import Foundation
import Testing

/// Retention Messaging API bodies from Apple's corpus, plus the request and realtime bodies.
@Suite(.enabled(if: Corpus.isAvailable, Corpus.missingMessage))
struct RetentionMessagingCorpusTests {
    static let identifier = UUID(uuidString: "a1b2c3d4-e5f6-7890-a1b2-c3d4e5f67890")

    @Test func imageList() throws {
        let r = try decodeLosslessly(
            GetImageListResponse.self, Corpus.model("getImageListResponse.json"))
        let item = try #require(r.imageIdentifiers?.first)
        #expect(r.imageIdentifiers?.count == 1)
        #expect(item.imageIdentifier == Self.identifier)
        #expect(item.imageState == .approved)
        #expect(item.imageSize == .fullSize)
    }

    @Test func messageList() throws {
        let r = try decodeLosslessly(
            GetMessageListResponse.self, Corpus.model("getMessageListResponse.json"))
        let item = try #require(r.messageIdentifiers?.first)
        #expect(item.messageIdentifier == Self.identifier)
        #expect(item.messageState == .approved)
    }

    @Test func defaultMessage() throws {
        let r = try decodeLosslessly(
            DefaultConfigurationResponse.self, Corpus.model("getDefaultMessageResponse.json"))
        #expect(r.messageIdentifier == Self.identifier)
    }

    @Test func realtimeUrl() throws {
        let r = try decodeLosslessly(
            RealtimeUrlResponse.self, Corpus.model("getRealtimeUrlResponse.json"))
        #expect(r.realtimeURL == "https://example.com/realtime")
    }

    static let config = PerformanceTestConfig(
        maxConcurrentRequests: 10, totalRequests: 100, totalDuration: 60_000,
        responseTimeThreshold: 500,
        successRateThreshold: 95)

    @Test func performanceTest() throws {
        let r = try decodeLosslessly(
            PerformanceTestResponse.self, Corpus.model("performanceTestResponse.json"))
        #expect(r.config == Self.config)
        #expect(r.requestId == "c4b87a1d-2e3f-4a5b-9c6d-7e8f9a0b1c2d")
    }

    @Test func performanceTestResult() throws {
        let r = try decodeLosslessly(
            PerformanceTestResultResponse.self, Corpus.model("performanceTestResultResponse.json"))
        #expect(r.config == Self.config)
        #expect(r.target == "https://example.com/retention")
        #expect(r.result == .pass)
        #expect(r.successRate == 98)
        #expect(r.numPending == 0)
        #expect(
            r.responseTimes
                == PerformanceTestResponseTimes(average: 120, p50: 100, p90: 200, p95: 250, p99: 400))
        #expect(r.failures == ["TIMED_OUT": 1, "NO_RESPONSE": 1])
        #expect(r.failureCount(for: .timedOut) == 1)
        #expect(r.failureCount(for: .tlsIssue) == 0)
    }
}

struct RetentionMessagingRequestTests {
    @Test func uploadMessageBodyEncodesApplesKeys() throws {
        let image = UUID(uuidString: "a1b2c3d4-e5f6-7890-a1b2-c3d4e5f67890")!
        let body = UploadMessageRequestBody(
            header: "Stay", body: "We miss you",
            image: UploadMessageImage(imageIdentifier: image, altText: "A bird"),
            bulletPoints: [BulletPoint(text: "Ad free", imageIdentifier: image, altText: "tick")],
            headerPosition: RawEnum(.aboveImage))
        let json = try AppStoreJSON.decode(JSONValue.self, from: AppStoreJSON.encode(body)).normalized
        #expect(
            json
                == .object([
                    "header": .string("Stay"), "body": .string("We miss you"),
                    "image": .object([
                        "imageIdentifier": .string(image.uuidString.lowercased()), "altText": .string("A bird"),
                    ]),
                    "bulletPoints": .array([
                        .object([
                            "text": .string("Ad free"), "imageIdentifier": .string(image.uuidString.lowercased()),
                            "altText": .string("tick"),
                        ])
                    ]),
                    "headerPosition": .string("ABOVE_IMAGE"),
                ]))
        #expect(try reencoded(body) == body)
    }

    @Test func realtimeResponseWithPromotionalOffer() throws {
        let json = #"""
            {"promotionalOffer":{"messageIdentifier":"a1b2c3d4-e5f6-7890-a1b2-c3d4e5f67890",
             "promotionalOfferSignatureV1":{"encodedSignature":"c2ln","productId":"com.example.monthly",
             "nonce":"48ccfa42-7431-4f22-9908-7e88983e105a","timestamp":1698148900000,"keyId":"KEY",
             "offerIdentifier":"winback"}}}
            """#
        let body = try decodeLosslessly(RealtimeResponseBody.self, json.utf8Data)
        let offer = try #require(body.promotionalOffer)
        #expect(offer.promotionalOfferSignatureV1?.timestamp == 1_698_148_900_000)
        #expect(
            offer.promotionalOfferSignatureV1?.nonce
                == UUID(uuidString: "48ccfa42-7431-4f22-9908-7e88983e105a"))
        #expect(body.message == nil && body.alternateProduct == nil)

        let switchPlan = try decodeLosslessly(
            RealtimeResponseBody.self,
            #"{"alternateProduct":{"messageIdentifier":"a1b2c3d4-e5f6-7890-a1b2-c3d4e5f67890","productId":"com.example.yearly"}}"#
                .utf8Data)
        #expect(switchPlan.alternateProduct?.productId == "com.example.yearly")
    }
}

/// Advanced Commerce bodies are outside Storekeeper's typed models; they must survive as opaque JSON.
@Suite(.enabled(if: Corpus.isAvailable, Corpus.missingMessage))
struct AdvancedCommerceCorpusTests {
    @Test func everyAdvancedCommerceFileRoundTripsAsJSONValue() throws {
        let names = try Corpus.modelNames(prefix: "advancedCommerce")
        #expect(names.count == 34)
        for name in names {
            try decodeLosslessly(JSONValue.self, Corpus.model(name))
        }
    }
}
