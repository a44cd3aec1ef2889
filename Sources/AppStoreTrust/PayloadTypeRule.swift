/// The types of payload the App Store signs, each with top-level members that only it carries.
enum SignedPayloadKind: String, Sendable, Hashable, CaseIterable {
    case transaction = "signed transaction"
    case renewalInfo = "signed renewal info"
    case notification = "notification"
    case appTransaction = "app transaction"

    /// Members no other signed type has at its top level (`originalTransactionId`, `productId`,
    /// `bundleId`, `environment`, `signedDate` are shared and tell nothing).
    var markers: Set<String> {
        switch self {
        case .transaction: ["transactionId", "purchaseDate", "transactionReason", "inAppOwnershipType"]
        case .renewalInfo:
            ["autoRenewStatus", "autoRenewProductId", "renewalDate", "expirationIntent", "isInBillingRetryPeriod"]
        case .notification: ["notificationType", "notificationUUID"]
        case .appTransaction: ["receiptType", "appTransactionId", "originalApplicationVersion", "receiptCreationDate"]
        }
    }
}

/// The payload is of the type the caller asked to verify (`format.payloadType`).
///
/// Checked after the signature and before the claims (bundle id, appAppleId, environment):
/// Apple signs every type with the same chain, so a genuine renewal info posted as a
/// notification passes every signature rule, and without this rule it was refused for a claim
/// it simply does not have (`app.bundleIdMismatch`, `environment.mismatch`), which sends whoever
/// reads the refusal after the wrong cause.
///
/// A payload is refused only when it carries another type's markers and none of its own: a
/// sparse payload (Apple's own test vectors hold little more than `environment` and
/// `signedDate`) goes on to the claims, as in Apple's library.
/// - Note: Stateless; thread-safe.
enum PayloadTypeRule {
    static func check(topLevelKeys keys: Set<String>, expected: SignedPayloadKind) throws(TrustError) {
        guard keys.isDisjoint(with: expected.markers),
            let actual = SignedPayloadKind.allCases.first(where: {
                $0 != expected && !keys.isDisjoint(with: $0.markers)
            })
        else { return }
        throw TrustError(
            .payloadTypeMismatch, "expected a \(expected.rawValue), but the payload is a \(actual.rawValue)")
    }
}
