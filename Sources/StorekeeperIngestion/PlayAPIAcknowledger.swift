import GooglePlayClient

/// `PlayPurchaseAcknowledging` over the app's Play Developer API client: subscriptions through
/// `purchases.subscriptions.acknowledge`, one-time products through
/// `purchases.products.acknowledge`. Failures keep Google's stable client code; transient ones
/// (429, 5xx, transport) and a Play side being reconfigured are retried by the job queue.
/// - Note: Immutable; `Sendable`.
public struct PlayAPIAcknowledger: PlayPurchaseAcknowledging {
    let runtimes: PlayRuntimes

    public init(runtimes: PlayRuntimes) {
        self.runtimes = runtimes
    }

    public func acknowledge(_ request: PlayAcknowledgementRequest) async throws(PlayAcknowledgementFailure) {
        let runtime: PlayRuntime
        do {
            runtime = try await runtimes.runtime(appId: request.appId)
        } catch {
            throw PlayAcknowledgementFailure(
                code: error.code.rawValue, message: error.message, isRetryable: error.isRetryable)
        }
        guard let client = runtime.client else {
            throw PlayAcknowledgementFailure(
                code: IngestionError.Code.googlePlayNotConfigured.rawValue,
                message: "The app's Google Play side has no serviceAccountKey.", isRetryable: false)
        }
        do throws(GooglePlayClientError) {
            switch request.kind {
            case .subscription:
                try await client.acknowledgeSubscription(
                    packageName: request.packageName, subscriptionId: request.productId, token: request.purchaseToken)
            case .product:
                try await client.acknowledgeProduct(
                    packageName: request.packageName, productId: request.productId, token: request.purchaseToken)
            }
        } catch {
            throw PlayAcknowledgementFailure(
                code: error.code.rawValue,
                message: "Google Play refused the acknowledgement"
                    + (error.httpStatus.map { " (HTTP \($0)\(error.googleStatus.map { ", \($0)" } ?? ""))" } ?? "")
                    + ".",
                isRetryable: error.isTransient)
        }
    }
}
