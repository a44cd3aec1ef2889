import AppStoreModels
import Entitlements
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// Migration `0024_inline_fact_rows` (PostgreSQL storage parameters): a notification's signed
/// payload is kept out of line without compression, and a transaction's row of a few kilobytes
/// stays whole in its table, uncompressed.
@Suite("Migration 0024: inline fact rows")
struct InlineFactRowsMigrationTests {
    @Test(
        "signed payloads are stored as they are and a few-kilobyte row stays in its table",
        .enabled(if: Backend.postgresURL != nil, Backend.postgresSkipMessage))
    func storageParameters() async throws {
        try await withStore(.postgres) { store, _ in
            try await F.setUp(store)
            let notification = F.notifications(customers: 1, perCustomer: 1)[0]
            // Compressible on purpose: before 0024, pglz shrank it (and tried on every payload).
            let payload = String(repeating: "eyJhbGciOiJFUzI1NiJ9", count: 600)
            // Incompressible, as a JWS is: before 0024 it went out of line once its row passed 2 KB.
            let jws = Data((0..<2_250).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
            try await store.write { tx in
                _ = try tx.insertNotification(
                    NewNotification(
                        appId: F.appId, notificationUUID: notification.uuid, type: notification.type, subtype: nil,
                        environment: .production, originalTransactionId: notification.transaction.originalTransactionId,
                        signedDate: notification.transaction.signedDate, signedPayload: payload,
                        fact: notification.notificationFact, receivedAt: F.now))
                _ = try tx.insertTransaction(
                    NewTransaction(
                        appId: F.appId, jws: jws, fact: notification.transaction, source: "notification",
                        receivedAt: F.now))
            }
            let settings = try await store.read { reader in
                try reader.sql(
                    """
                    SELECT c.relname, array_to_string(c.reloptions, ',') FROM pg_class c
                    WHERE c.relname IN ('signed_transactions', 'signed_renewal_infos', 'notifications')
                      AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
                    ORDER BY c.relname
                    """
                ).map { [try $0.text(0), try $0.optionalText(1) ?? ""] }
            }
            #expect(
                settings == [
                    ["notifications", ""],
                    ["signed_renewal_infos", "toast_tuple_target=8160"],
                    ["signed_transactions", "toast_tuple_target=8160"],
                ])
            let stored = try await store.read { reader in
                (
                    try reader.sql(
                        "SELECT pg_column_size(signed_payload), octet_length(signed_payload) FROM notifications"
                    ).map { [try $0.integer(0), try $0.integer(1)] },
                    try reader.sql("SELECT pg_column_size(jws), octet_length(jws) FROM signed_transactions").map {
                        [try $0.integer(0), try $0.integer(1)]
                    },
                    // The transaction's 3 KB JWS stayed in its row: nothing in the TOAST table.
                    try reader.sql(
                        """
                        SELECT pg_relation_size(reltoastrelid) FROM pg_class
                        WHERE relname = 'signed_transactions'
                          AND relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
                        """
                    ).map { try $0.integer(0) },
                    // `e`: external, never compressed.
                    try reader.sql(
                        """
                        SELECT attstorage::text FROM pg_attribute
                        WHERE attrelid = 'notifications'::regclass AND attname = 'signed_payload'
                        """
                    ).map { try $0.text(0) }
                )
            }
            #expect(stored.0 == [[12_000, 12_000]])
            #expect(stored.3 == ["e"])
            // In the row, its 4-byte length header counts; out of line it would read 3,000.
            #expect(stored.1 == [[3_004, 3_000]])
            #expect(stored.2 == [0])
        }
    }
}
