import Foundation

/// The app's purchase record as the App Store signs it (`AppTransaction.jwsRepresentation`,
/// `signedAppTransactionInfo`).
/// - Note: Immutable value; `Sendable`.
public struct AppTransaction: Sendable, Hashable, Codable {
    public var receiptType: RawEnum<AppStoreEnvironment>?
    public var appAppleId: Int64?
    public var bundleId: String?
    public var applicationVersion: String?
    public var versionExternalIdentifier: Int64?
    public var receiptCreationDate: Timestamp?
    public var originalPurchaseDate: Timestamp?
    public var originalApplicationVersion: String?
    public var deviceVerification: String?
    public var deviceVerificationNonce: UUID?
    public var preorderDate: Timestamp?
    public var appTransactionId: String?
    public var originalPlatform: RawEnum<PurchasePlatform>?

    public init() {}
}
