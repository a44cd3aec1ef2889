import AppStoreModels
import Entitlements
import Foundation
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// The GET read path: the committed CustomerInfo JSON with the instant until which it holds.
@Suite("Customer state lookup")
struct CustomerStateLookupTests {
    static func entitlement(expires: Timestamp?, grace: Timestamp? = nil) -> EntitlementInfo {
        EntitlementInfo(
            entitlementId: "pro", isActive: true, expiresDate: expires, productId: "monthly", transactionId: "t1",
            originalTransactionId: "o1", purchaseDate: F.at(0), originalPurchaseDate: F.at(0), periodType: .normal,
            willRenew: true, unsubscribeDetectedAt: nil, billingIssueDetectedAt: nil, gracePeriodExpiresDate: grace,
            ownership: .purchased, environment: .production, reason: "test")
    }

    @Test("the stored JSON comes back verbatim with its next scheduled change", arguments: Backend.enabled)
    func lookup(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await F.setUp(store)
            let customer = try await store.write { tx in
                let customer = try tx.ensureCustomer(appId: F.appId, appUserId: "alice", at: F.at(1))
                try tx.addAlias("alice@old", customerId: customer.id, at: F.at(1))
                return customer
            }
            // The reads go through one function, never a closure written inside `#expect`: such a
            // closure and a later one of the same type got one name in this test (Swift 6.3.1),
            // and one body ran for both (`scripts/closure-collisions.sh` finds them).
            func lookup(_ name: String, appId: String = F.appId) async throws -> CustomerStateLookup {
                try await store.read { try $0.customerState(appId: appId, knownAs: name, environment: .production) }
            }
            #expect(try await lookup("bob") == .noCustomer)
            #expect(try await lookup("alice") == .noState(customerId: customer.id))
            // An expiry at day 30 and a grace period ending at day 36: the state holds until day 30.
            var info = CustomerInfo(customerId: "alice", environment: .production, evaluatedAt: F.at(1))
            info.entitlements["pro"] = Self.entitlement(expires: F.at(30), grace: F.at(36))
            let stored = info
            _ = try await store.write {
                try $0.saveCustomerInfo(stored, customerId: customer.id, expectedVersion: nil, at: F.at(1))
            }
            let json = String(decoding: AppStoreJSON.encode(info), as: UTF8.self)
            for name in ["alice", "alice@old"] {
                #expect(
                    try await lookup(name)
                        == .state(
                            customerId: customer.id, infoJSON: json, validUntil: F.at(30).millisecondsSince1970,
                            digest: nil))
            }
            #expect(try await lookup("alice", appId: "other-app") == .noCustomer)
            // Past the expiry only the grace period's end is still ahead; with no dates, never.
            info.evaluatedAt = F.at(31)
            let later = info
            _ = try await store.write {
                try $0.saveCustomerInfo(later, customerId: customer.id, expectedVersion: 1, at: F.at(31))
            }
            let afterExpiry = try await lookup("alice")
            guard case .state(_, _, let validUntil, _) = afterExpiry else {
                Issue.record("no state after the second save")
                return
            }
            #expect(validUntil == F.at(36).millisecondsSince1970)
            info.entitlements = [:]
            let none = info
            _ = try await store.write {
                try $0.saveCustomerInfo(none, customerId: customer.id, expectedVersion: 2, at: F.at(32))
            }
            let undated = try await lookup("alice")
            guard case .state(_, _, let forever, _) = undated else {
                Issue.record("no state after the third save")
                return
            }
            #expect(forever == Int64.max)
        }
    }

    @Test(
        "a state saved with a digest reads back with it, and a save without one clears it",
        arguments: Backend.enabled)
    func digest(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await F.setUp(store)
            let customer = try await store.write { tx in
                try tx.ensureCustomer(appId: F.appId, appUserId: "alice", at: F.at(1))
            }
            func lookup() async throws -> CustomerStateLookup {
                try await store.read {
                    try $0.customerState(appId: F.appId, knownAs: "alice", environment: .production)
                }
            }
            let info = CustomerInfo(customerId: "alice", environment: .production, evaluatedAt: F.at(1))
            let json = String(decoding: AppStoreJSON.encode(info), as: UTF8.self)
            _ = try await store.write {
                try $0.saveCustomerInfo(
                    info, json: json, digest: "0123456789abcdef0123456789abcdef", customerId: customer.id,
                    expectedVersion: nil, at: F.at(1))
            }
            #expect(
                try await lookup()
                    == .state(
                        customerId: customer.id, infoJSON: json, validUntil: Int64.max,
                        digest: "0123456789abcdef0123456789abcdef"))
            _ = try await store.write {
                try $0.saveCustomerInfo(
                    info, json: json, digest: "fedcba9876543210fedcba9876543210", customerId: customer.id,
                    expectedVersion: 1, at: F.at(2))
            }
            guard case .state(_, _, _, let replaced) = try await lookup() else {
                Issue.record("no state after the second save")
                return
            }
            #expect(replaced == "fedcba9876543210fedcba9876543210")
            // A save that gives none (the plain overload) must not leave the old digest standing
            // beside a new text.
            _ = try await store.write {
                try $0.saveCustomerInfo(info, customerId: customer.id, expectedVersion: 2, at: F.at(3))
            }
            guard case .state(_, _, _, let cleared) = try await lookup() else {
                Issue.record("no state after the third save")
                return
            }
            #expect(cleared == nil)
            // An instance older than migration 0026, still running beside a newer one, saves as
            // it always did: version and text, not the digest. The digest saved before is then
            // not this text's, and must not be answered.
            _ = try await store.write {
                try $0.saveCustomerInfo(
                    info, json: json, digest: "0123456789abcdef0123456789abcdef", customerId: customer.id,
                    expectedVersion: 3, at: F.at(4))
            }
            _ = try await store.write { tx in
                try (tx as! SQLStoreTransaction).connection.execute(
                    """
                    UPDATE customer_states SET version = version + 1, info_json = $2, updated_at = 5
                    WHERE customer_id = $1
                    """, [.integer(customer.id), .text(json + " ")])
            }
            guard case .state(_, let older, _, let unbound) = try await lookup() else {
                Issue.record("no state after the older instance's save")
                return
            }
            #expect(older == json + " ")
            #expect(unbound == nil)
        }
    }
}
