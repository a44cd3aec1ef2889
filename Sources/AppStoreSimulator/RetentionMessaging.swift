import AppStoreModels
import Foundation

/// The Retention Messaging API's resources for each app: images, messages, default messages per
/// product and locale, the real-time URL and performance tests. Uploads are approved at once
/// (Apple reviews them; a simulator has nobody to wait for).
struct RetentionMessagingState: Sendable {
    static let maximumImages = 100
    static let maximumMessages = 100

    var images: [String: [UUID: ImageSize?]] = [:]
    var messages: [String: [UUID: UploadMessageRequestBody]] = [:]
    var defaults: [String: [String: UUID]] = [:]
    var realtimeURL: [String: String] = [:]
    var performanceTests: [String: PerformanceTestResultResponse] = [:]
}

extension AppStoreSimulator {
    func uploadImage(bundleId: String, id: UUID, size: ImageSize?, bytes: Data) throws(SimulatorError) {
        guard bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) else { throw .api(.invalidImage, "Invalid image.") }
        var images = messaging.images[bundleId] ?? [:]
        guard images[id] == nil else { throw .api(.imageAlreadyExists, "Image already exists.") }
        guard images.count < RetentionMessagingState.maximumImages else {
            throw .api(.maximumNumberOfImagesReached, "Maximum number of images reached.")
        }
        images[id] = size
        messaging.images[bundleId] = images
    }

    func deleteImage(bundleId: String, id: UUID) throws(SimulatorError) {
        guard messaging.images[bundleId]?[id] != nil else { throw .api(.imageNotFound, "Image not found.") }
        messaging.images[bundleId]?[id] = nil
    }

    func imageList(bundleId: String) -> GetImageListResponse {
        GetImageListResponse(
            imageIdentifiers: (messaging.images[bundleId] ?? [:]).sorted { $0.key.uuidString < $1.key.uuidString }.map {
                GetImageListResponseItem(
                    imageIdentifier: $0.key, imageState: RawEnum(.approved), imageSize: $0.value.map { RawEnum($0) })
            })
    }

    func uploadMessage(bundleId: String, id: UUID, body: UploadMessageRequestBody) throws(SimulatorError) {
        var messages = messaging.messages[bundleId] ?? [:]
        guard messages[id] == nil else { throw .api(.messageAlreadyExists, "Message already exists.") }
        guard (body.header?.count ?? 0) <= UploadMessageRequestBody.maximumHeaderLength else {
            throw .api(.headerTooLong, "Header too long.")
        }
        guard (body.body?.count ?? 0) <= UploadMessageRequestBody.maximumBodyLength else {
            throw .api(.bodyTooLong, "Body too long.")
        }
        guard messages.count < RetentionMessagingState.maximumMessages else {
            throw .api(.maximumNumberOfMessagesReached, "Maximum number of messages reached.")
        }
        messages[id] = body
        messaging.messages[bundleId] = messages
    }

    func deleteMessage(bundleId: String, id: UUID) throws(SimulatorError) {
        guard messaging.messages[bundleId]?[id] != nil else { throw .api(.messageNotFound, "Message not found.") }
        messaging.messages[bundleId]?[id] = nil
    }

    func messageList(bundleId: String) -> GetMessageListResponse {
        GetMessageListResponse(
            messageIdentifiers: (messaging.messages[bundleId] ?? [:]).keys.sorted { $0.uuidString < $1.uuidString }.map
            {
                GetMessageListResponseItem(messageIdentifier: $0, messageState: RawEnum(.approved))
            })
    }

    func configureDefaultMessage(bundleId: String, productId: String, locale: String, message: UUID?)
        throws(SimulatorError)
    {
        guard let message, messaging.messages[bundleId]?[message] != nil else {
            throw .api(.messageNotFound, "Message not found.")
        }
        guard locale.count >= 2, locale.count <= 10 else { throw .api(.invalidLocale, "Invalid locale.") }
        messaging.defaults[bundleId, default: [:]][productId + "|" + locale] = message
    }

    func defaultMessage(bundleId: String, productId: String, locale: String) throws(SimulatorError)
        -> DefaultConfigurationResponse
    {
        guard let id = messaging.defaults[bundleId]?[productId + "|" + locale] else {
            throw .api(code: 4_040_020, "Default message not found.")
        }
        return DefaultConfigurationResponse(messageIdentifier: id)
    }

    func deleteDefaultMessage(bundleId: String, productId: String, locale: String) throws(SimulatorError) {
        guard messaging.defaults[bundleId]?.removeValue(forKey: productId + "|" + locale) != nil else {
            throw .api(code: 4_040_020, "Default message not found.")
        }
    }

    func setRealtimeURL(bundleId: String, url: String?) {
        messaging.realtimeURL[bundleId] = url
    }

    func realtimeURL(bundleId: String) -> String? { messaging.realtimeURL[bundleId] }

    func initiatePerformanceTest(bundleId: String, transactionId: String?) throws(SimulatorError)
        -> PerformanceTestResponse
    {
        guard let transactionId else { throw .api(.invalidTransactionId, "Invalid transaction id.") }
        _ = try state.transactionInfo(transactionId, bundleId: bundleId)
        let config = PerformanceTestConfig(
            maxConcurrentRequests: 10, totalRequests: 100, totalDuration: 60_000, responseTimeThreshold: 700,
            successRateThreshold: 95)
        let id = UUID().uuidString.lowercased()
        messaging.performanceTests[id] = PerformanceTestResultResponse(
            config: config, target: messaging.realtimeURL[bundleId], result: RawEnum(.pass), successRate: 100,
            numPending: 0,
            responseTimes: PerformanceTestResponseTimes(average: 50, p50: 45, p90: 80, p95: 90, p99: 120),
            failures: [:])
        return PerformanceTestResponse(config: config, requestId: id)
    }

    func performanceTestResult(id: String) -> PerformanceTestResultResponse? { messaging.performanceTests[id] }
}
