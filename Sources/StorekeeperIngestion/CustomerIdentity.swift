import AppStoreModels
import Entitlements
import Storage

/// Who owns a purchase, inside a write transaction: finds a customer by app user id or alias,
/// links app account tokens, and claims original transactions under the app's transfer policy.
///
/// Purchases that arrive before the app posts them (a notification for an unknown original
/// transaction without a known app account token) stay unclaimed: their facts are stored and
/// join a customer's evaluation once a customer claims the original transaction.
/// - Note: Stateless; runs on the store's thread inside a write body.
public enum CustomerIdentity {
    /// Whether `value` may name a customer: 1 to 256 bytes of printable characters, no `/` and
    /// no `..` (it appears in URL paths). The API and the receipt backfill apply the same rule.
    public static func isValidAppUserId(_ value: String) -> Bool {
        let bytes = value.utf8
        guard (1...256).contains(bytes.count) else { return false }
        if bytes.allSatisfy({ $0 < 0x80 }) {
            // ASCII, the usual id: each character is one byte, so one pass over the bytes decides
            // exactly what the character search below does, without its grapheme breaking (1% of
            // a GET).
            var previous: UInt8 = 0
            for byte in bytes {
                if byte == UInt8(ascii: "/") || byte < 0x20 || byte == 0x7F
                    || (byte == UInt8(ascii: ".") && previous == UInt8(ascii: "."))
                {
                    return false
                }
                previous = byte
            }
            return true
        }
        // `/` by scalar: a character search misses one that carries a combining mark ("/\u{301}"
        // is one character), which would still put a `/` in a path.
        return !value.unicodeScalars.contains("/") && !value.contains("..")
            && !value.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }

    /// What claiming one original transaction did.
    enum Claim: Sendable, Hashable {
        case claimed
        case alreadyOwned
        /// Moved from another customer (transfer to newest).
        case transferred(from: CustomerRecord)
        /// Another customer keeps it (keep with first).
        case keptBy(CustomerRecord)
        /// Another customer owns it and this one shares it (share).
        case shared(with: CustomerRecord)
    }

    /// The customer known as `appUserId` (directly or as an alias), created if unknown, locked.
    static func resolve(appId: String, appUserId: String, in transaction: any StoreTransaction, now: Timestamp) throws
        -> CustomerRecord
    {
        if transaction.customerExists(appId: appId, appUserId: appUserId) == false,
            let aliased = try transaction.customerId(appId: appId, .alias(appUserId))
        {
            return try transaction.lockCustomer(id: aliased)
        }
        return try transaction.ensureCustomer(appId: appId, appUserId: appUserId, at: now)
    }

    /// The customer an App Store fact belongs to: the owner of its original transaction, or the
    /// customer its app account token links to (who then claims it), or `nil` (unclaimed).
    static func owner(
        appId: String, originalTransactionId: String, appAccountTokens: [String],
        in transaction: any StoreTransaction, now: Timestamp
    ) throws -> CustomerRecord? {
        // Found by id and then locked: the lock reads the record (a lookup by record read it twice).
        if let owner = try transaction.customerId(appId: appId, .originalTransactionId(originalTransactionId)) {
            return try transaction.lockCustomer(id: owner)
        }
        for token in appAccountTokens {
            guard let linked = try transaction.customerId(appId: appId, .appAccountToken(token)) else { continue }
            let locked = try transaction.lockCustomer(id: linked)
            try transaction.claimOriginalTransaction(originalTransactionId, customerId: locked.id, at: now)
            return try transaction.lockCustomer(id: locked.id)
        }
        return nil
    }

    /// Claims `originalTransactionId` for `customer` under `policy`; records a transfer in the
    /// audit log.
    static func claim(
        _ originalTransactionId: String, for customer: CustomerRecord, policy: TransferPolicy,
        in transaction: any StoreTransaction, now: Timestamp
    ) throws -> Claim {
        guard let owner = try transaction.customer(appId: customer.appId, .originalTransactionId(originalTransactionId))
        else {
            try transaction.claimOriginalTransaction(originalTransactionId, customerId: customer.id, at: now)
            return .claimed
        }
        if owner.id == customer.id { return .alreadyOwned }
        switch policy {
        case .keepWithFirst:
            return .keptBy(owner)
        case .share:
            if try transaction.sharePurchase(originalTransactionId, customerId: customer.id, at: now) {
                try transaction.appendAudit(
                    NewAuditEntry(
                        at: now, actor: "storekeeper", action: "customer.share", appId: customer.appId,
                        detail: .object([
                            "originalTransactionId": .string(originalTransactionId),
                            "ownerAppUserId": .string(owner.appUserId),
                            "sharedWithAppUserId": .string(customer.appUserId),
                        ])))
            }
            return .shared(with: owner)
        case .transferToNewest:
            let previous = try transaction.lockCustomer(id: owner.id)
            try transaction.claimOriginalTransaction(originalTransactionId, customerId: customer.id, at: now)
            try transaction.appendAudit(
                NewAuditEntry(
                    at: now, actor: "storekeeper", action: "customer.transfer", appId: customer.appId,
                    detail: .object([
                        "originalTransactionId": .string(originalTransactionId),
                        "fromAppUserId": .string(previous.appUserId), "toAppUserId": .string(customer.appUserId),
                    ])))
            return .transferred(from: previous)
        }
    }
}

extension CustomerIdentity {
    /// The TRANSFER event of the receiving customer. Its id names the purchase, both app user
    /// ids and the instant, so a later transfer back is a new event while a replayed request
    /// (which finds the purchase already owned) makes none.
    static func transferEvent(
        _ originalTransactionId: String, productId: String, environment: AppStoreEnvironment,
        from previous: CustomerRecord, to customer: CustomerRecord, catalog: ProductCatalog?, at now: Timestamp
    ) -> LifecycleEvent {
        LifecycleEvent(
            id:
                "TRANSFER/\(originalTransactionId)/\(previous.appUserId)->\(customer.appUserId)/\(now.millisecondsSince1970)",
            type: .transfer, customerId: customer.appUserId, environment: environment, occurredAt: now,
            productId: productId, entitlementIds: catalog?[productId]?.entitlementIds ?? [],
            originalTransactionId: originalTransactionId,
            summary: "purchase \(originalTransactionId) transferred from \(previous.appUserId) to \(customer.appUserId)"
        )
    }
}

extension StoreReader {
    /// Whether a customer with exactly this app user id exists.
    func customerExists(appId: String, appUserId: String) -> Bool {
        ((try? customerId(appId: appId, .appUserId(appUserId))) ?? nil) != nil
    }

    /// The customer known as `appUserId` directly or as an alias.
    public func customer(appId: String, knownAs appUserId: String) throws -> CustomerRecord? {
        if let direct = try customer(appId: appId, .appUserId(appUserId)) { return direct }
        return try customer(appId: appId, .alias(appUserId))
    }
}
