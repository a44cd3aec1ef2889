import AppStoreModels
import Entitlements
import Storage

/// One ingestion's write, whatever its source: the verified raw payloads and facts to store,
/// the jobs it queues, and the rule that says which customer they belong to. `FactCommitter`
/// turns it into rows in one database transaction; nothing else writes facts.
/// - Note: Immutable value; `Sendable`.
public struct FactBatch: Sendable {
    public var appId: String
    /// When the batch was received; every row it writes carries this instant.
    public var receivedAt: Timestamp
    /// The environment whose `CustomerInfo` the commit returns.
    public var environment: AppStoreEnvironment
    /// A notification is stored first; if it was already stored the batch stops there
    /// (`duplicate`), so a replayed notification changes nothing.
    public var notification: NewNotification?
    public var transactions: [NewTransaction] = []
    public var renewals: [NewRenewalInfo] = []
    /// A Google Play RTDN push: stored first like `notification`; a `messageId` already stored
    /// stops the batch there (`duplicate`).
    public var playNotification: NewPlayNotification?
    /// Google Play snapshots and voided purchases. Each purchase token is owned like an
    /// original transaction id (`customer_transactions`), so `ownership` applies to tokens too.
    public var playFacts: [NewPlayFact] = []
    /// New token → the token it replaces (`linkedPurchaseToken`): an unowned new token goes to
    /// the owner of the one it replaces (an upgrade, a resubscription) under `existingOwner`.
    public var linkedPurchaseTokens: [String: String] = [:]
    /// The receipt (and verifyReceipt's answer) the facts came from, kept for audit.
    public var receipt: Receipt?
    public var jobs: [Job] = []
    /// App account tokens the facts carry: linked to the claiming customer (`claim`), or used
    /// to find the customer of an unowned purchase (`existingOwner`).
    public var appAccountTokens: [String] = []
    public var ownership: Ownership
    /// The job this batch finishes: it is marked complete in the same transaction as the facts,
    /// and the batch fails (`conflict`) if the lease was lost, so a job's facts apply once.
    public var completesJob: JobLease?
    /// The backfill export line the facts came from: recorded first; if it was already
    /// recorded the batch stops there (`duplicate`), so a resumed backfill imports a line once.
    public var backfillLine: BackfillLineMark?

    /// An imported line of a receipt backfill: its SHA-256 (hex) and the user it names.
    public struct BackfillLineMark: Sendable, Hashable {
        public var digest: String
        public var appUserId: String

        public init(digest: String, appUserId: String) {
            self.digest = digest
            self.appUserId = appUserId
        }
    }

    /// Who the facts belong to.
    public enum Ownership: Sendable, Hashable {
        /// Facts from the App Store (notifications, replays, polling): each original transaction
        /// stays with the customer that owns it, or goes to the customer one of the batch's app
        /// account tokens links to; otherwise it stays unclaimed until a customer claims it.
        case existingOwner
        /// Facts an app posted for its user: the customer known as `appUserId` (created if new)
        /// claims every original transaction under the app's transfer policy.
        case claim(appUserId: String, policy: TransferPolicy)
        /// The customer known as `alias` is merged into `appUserId`: its purchases move over and
        /// the alias names the target from now on.
        case merge(appUserId: String, alias: String)
        /// Facts completing a purchase that `appUserId` posted (the App Store Server API's
        /// answer, applied later by a job): each original transaction stays with the customer
        /// that owns it now, or goes to the customer an app account token links; one nobody
        /// owns goes to `appUserId`, as it would have if Apple had answered at once.
        case completion(appUserId: String)
    }

    /// A StoreKit 1 receipt as posted, and Apple's verifyReceipt answer when it was asked.
    public struct Receipt: Sendable, Hashable {
        public var receiptData: String
        public var responseBody: String?

        public init(receiptData: String, responseBody: String?) {
            self.receiptData = receiptData
            self.responseBody = responseBody
        }
    }

    /// A job queued with the facts (for example answering a consumption request), for the
    /// batch's app: its dedupe key is unique within that app.
    public struct Job: Sendable, Hashable {
        public var kind: String
        public var payload: String
        public var dedupeKey: String?

        public init(kind: String, payload: String, dedupeKey: String?) {
            self.kind = kind
            self.payload = payload
            self.dedupeKey = dedupeKey
        }
    }

    public init(
        appId: String, receivedAt: Timestamp, environment: AppStoreEnvironment, ownership: Ownership,
        notification: NewNotification? = nil
    ) {
        self.appId = appId
        self.receivedAt = receivedAt
        self.environment = environment
        self.ownership = ownership
        self.notification = notification
    }

    /// Every original transaction the facts are about, sorted (the order customers are locked in).
    public var originalTransactionIds: [String] {
        Array(
            Set(
                transactions.map(\.fact.originalTransactionId) + renewals.map(\.fact.originalTransactionId)
                    + playFacts.map(\.purchaseToken))
        ).sorted()
    }

    /// The product of a Play token in the batch (its first line item's), `""` when none.
    func playProductId(of token: String) -> String {
        for row in playFacts where row.purchaseToken == token {
            switch row.fact {
            case .playSubscription(let value): return value.lineItems.map(\.productId).sorted().first ?? ""
            case .playProductPurchase(let value): return value.productId
            default: continue
            }
        }
        return ""
    }

    /// The environments to re-evaluate: the facts' and the requested one.
    var environments: Set<AppStoreEnvironment> {
        var set = Set(transactions.map(\.fact.environment))
        set.formUnion(renewals.map(\.fact.environment))
        set.formUnion(playFacts.map(\.fact.environment))
        set.insert(environment)
        return set
    }
}

/// What committing a batch did.
/// - Note: Immutable value; `Sendable`.
public struct FactCommit: Sendable {
    public enum Outcome: String, Sendable, Hashable, Codable {
        /// Facts stored and the owning customer re-evaluated.
        case applied
        /// Facts stored; no customer owns the purchase yet.
        case unclaimed
        /// Recorded only (no customer facts).
        case recorded
        /// The batch's notification (or backfill line) was already stored: nothing changed.
        case duplicate
    }

    public var outcome: Outcome
    /// The claiming (or merge target) customer's state in the batch's environment; `nil` for
    /// `existingOwner` batches.
    public var customerInfo: CustomerInfo?
}
