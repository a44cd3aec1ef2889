import AppStoreModels
import Entitlements
import Storage

/// A Google Play fact read from Google's API (or the voided-purchases list) by the wiring's
/// Play client, which authenticated Google over TLS with the app's service account: the
/// decoded fact and the JSON exactly as Google answered it. Google signs nothing in these
/// answers, so "verified" means read from Google itself, never taken from a client.
///
/// Construction checks the bounds every input has: the raw JSON at most `maximumRawBytes`, a
/// purchase token at most `maximumTokenBytes`, ids at most `maximumIdentifierBytes`.
/// - Note: Immutable value; `Sendable`.
public struct VerifiedPlaySnapshot: Sendable, Hashable {
    public static let maximumRawBytes = 256 * 1024
    public static let maximumTokenBytes = 4096
    public static let maximumIdentifierBytes = 512

    public let fact: Fact
    public let raw: String

    public init(fact: Fact, raw: String) throws(IngestionError) {
        guard raw.utf8.count <= Self.maximumRawBytes else {
            throw IngestionError(.invalidBody, "The Google Play answer is larger than \(Self.maximumRawBytes) bytes.")
        }
        let token: String
        var identifiers: [String?] = []
        switch fact {
        case .playSubscription(let value):
            token = value.purchaseToken
            identifiers =
                [value.packageName, value.linkedPurchaseToken, value.obfuscatedAccountId]
                + value.lineItems.flatMap { [$0.productId, $0.latestSuccessfulOrderId, $0.offerId] }
            guard !value.lineItems.isEmpty || value.state == .pending || value.state == .pendingPurchaseCanceled
            else { throw IngestionError(.invalidTransaction, "The Google Play subscription has no line items.") }
        case .playProductPurchase(let value):
            token = value.purchaseToken
            identifiers = [value.packageName, value.productId, value.orderId, value.obfuscatedAccountId]
        case .playVoidedPurchase(let value):
            token = value.purchaseToken
            identifiers = [value.packageName, value.orderId]
        case .playOrder(let value):
            token = value.purchaseToken
            identifiers = [value.packageName, value.orderId]
        default:
            throw IngestionError(.invalidTransaction, "Not a Google Play fact.")
        }
        guard !token.isEmpty, token.utf8.count <= Self.maximumTokenBytes else {
            throw IngestionError(.invalidTransaction, "The purchase token is empty or too long.")
        }
        for identifier in identifiers.compactMap({ $0 }) where identifier.utf8.count > Self.maximumIdentifierBytes {
            throw IngestionError(.invalidTransaction, "An identifier of the Google Play answer is too long.")
        }
        self.fact = fact
        self.raw = raw
    }

    public var purchaseToken: String {
        switch fact {
        case .playSubscription(let value): return value.purchaseToken
        case .playProductPurchase(let value): return value.purchaseToken
        case .playVoidedPurchase(let value): return value.purchaseToken
        case .playOrder(let value): return value.purchaseToken
        default: return ""
        }
    }

    var packageName: String {
        switch fact {
        case .playSubscription(let value): return value.packageName
        case .playProductPurchase(let value): return value.packageName
        case .playVoidedPurchase(let value): return value.packageName
        case .playOrder(let value): return value.packageName
        default: return ""
        }
    }

    /// `obfuscatedExternalAccountId`: plays `appAccountToken`'s role in the identity rules.
    var obfuscatedAccountId: String? {
        switch fact {
        case .playSubscription(let value): return value.obfuscatedAccountId
        case .playProductPurchase(let value): return value.obfuscatedAccountId
        default: return nil
        }
    }

    /// The orders a purchase read shows: each line item's latest successful order of a
    /// subscription, the order of a one-time purchase that was paid (not pending or canceled).
    var orderIds: [String] {
        switch fact {
        case .playSubscription(let value):
            return Array(Set(value.lineItems.compactMap(\.latestSuccessfulOrderId))).sorted()
        case .playProductPurchase(let value):
            guard value.purchaseState == .purchased, let orderId = value.orderId else { return [] }
            return [orderId]
        default:
            return []
        }
    }

    /// A valid purchase Google still waits to see acknowledged (pending ones cannot be yet).
    var needsAcknowledgement: Bool {
        switch fact {
        case .playSubscription(let value):
            let state = value.state.value
            return !value.isAcknowledged
                && (state == .active || state == .inGracePeriod || state == .canceled)
        case .playProductPurchase(let value):
            return !value.isAcknowledged && value.purchaseState == .purchased
        default:
            return false
        }
    }
}
