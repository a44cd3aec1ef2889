import AppStoreModels
import Foundation

/// What the server keeps about an app beyond its App Store identity, stored as JSON in
/// `AppRecord.settings` (opaque to the store).
///
/// Secrets in here (the App Store Connect private key) never leave the server: the admin API
/// shows only whether they are set.
/// - Note: Immutable value; `Sendable`.
public struct AppSettings: Sendable, Hashable, Codable {
    /// PEM root certificates trusted for this app's signed payloads; empty means Apple's roots
    /// must be configured before signed data is accepted.
    public var rootCertificatesPEM: [String]
    public var appStoreConnect: AppStoreConnectCredentials?
    /// What happens when a purchase already owned by one app user id is posted by another.
    public var transferPolicy: TransferPolicy
    /// Receipts go to Apple's deprecated `verifyReceipt` instead of the App Store Server API.
    public var legacyReceiptFlow: Bool
    /// Queue a consumption-information answer job for each `CONSUMPTION_REQUEST`.
    public var answerConsumptionRequests: Bool
    /// Check certificate revocation online (OCSP) when verifying signed data.
    public var onlineVerification: Bool
    /// The verifyReceipt base URLs, for the simulator; Apple's when `nil`.
    public var verifyReceiptProductionURL: String?
    public var verifyReceiptSandboxURL: String?
    /// Per-app switches of the recovery workers (`nil`: every worker on when the app has an
    /// App Store Connect key).
    public var recovery: RecoverySwitches?
    /// How consumption requests are answered (`nil`: `ConsumptionPolicy()`'s defaults).
    public var consumption: ConsumptionPolicy?

    public init(
        rootCertificatesPEM: [String] = [], appStoreConnect: AppStoreConnectCredentials? = nil,
        transferPolicy: TransferPolicy = .transferToNewest, legacyReceiptFlow: Bool = false,
        answerConsumptionRequests: Bool = false, onlineVerification: Bool = false,
        verifyReceiptProductionURL: String? = nil, verifyReceiptSandboxURL: String? = nil,
        recovery: RecoverySwitches? = nil, consumption: ConsumptionPolicy? = nil
    ) {
        self.rootCertificatesPEM = rootCertificatesPEM
        self.appStoreConnect = appStoreConnect
        self.transferPolicy = transferPolicy
        self.legacyReceiptFlow = legacyReceiptFlow
        self.answerConsumptionRequests = answerConsumptionRequests
        self.onlineVerification = onlineVerification
        self.verifyReceiptProductionURL = verifyReceiptProductionURL
        self.verifyReceiptSandboxURL = verifyReceiptSandboxURL
        self.recovery = recovery
        self.consumption = consumption
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        rootCertificatesPEM = try container.decodeIfPresent([String].self, forKey: .rootCertificatesPEM) ?? []
        appStoreConnect = try container.decodeIfPresent(AppStoreConnectCredentials.self, forKey: .appStoreConnect)
        transferPolicy =
            try container.decodeIfPresent(TransferPolicy.self, forKey: .transferPolicy) ?? .transferToNewest
        legacyReceiptFlow = try container.decodeIfPresent(Bool.self, forKey: .legacyReceiptFlow) ?? false
        answerConsumptionRequests =
            try container.decodeIfPresent(Bool.self, forKey: .answerConsumptionRequests) ?? false
        onlineVerification = try container.decodeIfPresent(Bool.self, forKey: .onlineVerification) ?? false
        verifyReceiptProductionURL = try container.decodeIfPresent(String.self, forKey: .verifyReceiptProductionURL)
        verifyReceiptSandboxURL = try container.decodeIfPresent(String.self, forKey: .verifyReceiptSandboxURL)
        recovery = try container.decodeIfPresent(RecoverySwitches.self, forKey: .recovery)
        consumption = try container.decodeIfPresent(ConsumptionPolicy.self, forKey: .consumption)
    }

    /// The settings stored in an app record; defaults for fields that are absent. Settings
    /// that are present but unreadable are an error, never silently the defaults: an app whose
    /// roots or key cannot be read must not run as if it had none.
    public init(record settings: JSONValue) throws(IngestionError) {
        do {
            self = try AppStoreJSON.decode(AppSettings.self, from: AppStoreJSON.encode(settings))
        } catch {
            throw IngestionError(.appNotConfigured, "The app's stored settings cannot be read.")
        }
    }

    /// As stored in `AppRecord.settings`.
    public var jsonValue: JSONValue {
        (try? AppStoreJSON.decode(JSONValue.self, from: AppStoreJSON.encode(self))) ?? .object([:])
    }
}

/// An App Store Connect In-App Purchase key: what the App Store Server API client signs its
/// bearer tokens with.
/// - Note: Immutable value; `Sendable`. `privateKeyPEM` is a secret.
public struct AppStoreConnectCredentials: Sendable, Hashable, Codable {
    public var keyId: String
    public var issuerId: String
    public var privateKeyPEM: String
    /// The App Store Server API base URL, for the simulator; Apple's when `nil`.
    public var baseURL: String?

    public init(keyId: String, issuerId: String, privateKeyPEM: String, baseURL: String? = nil) {
        self.keyId = keyId
        self.issuerId = issuerId
        self.privateKeyPEM = privateKeyPEM
        self.baseURL = baseURL
    }
}

/// Who keeps a purchase that a second app user id posts.
/// - Note: Immutable value; `Sendable`.
public enum TransferPolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// The newest poster gets it; the previous owner loses it and a transfer is recorded.
    case transferToNewest = "transfer_to_newest"
    /// The first owner keeps it; the second poster gets nothing from it.
    case keepWithFirst = "keep_with_first"
    /// The first owner keeps it and every later poster shares it (migration 0002 records
    /// the sharers beside the owner); a refund or expiry reaches all of them.
    case share = "share"
}
