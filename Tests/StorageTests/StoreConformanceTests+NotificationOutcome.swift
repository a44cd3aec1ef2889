import AppStoreModels
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// A notification stored with its presumed outcome (`NewNotification.presumed`) is finished
/// without a write when processing ends as presumed, and corrected when it does not.
extension StoreConformanceTests {
    static func notification(_ uuid: String, presumed: NotificationProcessing?) -> NewNotification {
        NewNotification(
            appId: F.appId, notificationUUID: uuid, type: "DID_RENEW", subtype: nil, environment: .production,
            originalTransactionId: "o-\(uuid)", signedDate: F.at(1),
            signedPayload: String(repeating: "p", count: 12_000),
            fact: nil, receivedAt: F.at(2), presumed: presumed)
    }

    @Test(
        "a notification stored as presumed is finished without a write when it ends so, corrected when not",
        arguments: Backend.enabled)
    func presumedNotificationOutcome(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await F.setUp(store)
            let applied = NotificationProcessing(outcome: "applied", at: F.at(2))
            let rewritten = try await store.write { tx in
                var ids: [Int64] = []
                for (uuid, presumed) in [("as-presumed", applied), ("other-end", applied), ("unpresumed", nil)] {
                    guard
                        case .inserted(let id) = try tx.insertNotification(Self.notification(uuid, presumed: presumed))
                    else { throw StoreError(.database, "not inserted") }
                    ids.append(id)
                }
                return [
                    try tx.finishNotification(id: ids[0], outcome: "applied", at: F.at(2)),
                    try tx.finishNotification(id: ids[1], outcome: "unclaimed", at: F.at(2)),
                    try tx.finishNotification(id: ids[2], outcome: "applied", at: F.at(2)),
                ]
            }
            #expect(rewritten == [false, true, true])
            let stored = try await store.read { reader in
                try ["as-presumed", "other-end", "unpresumed"].map { uuid in
                    let record = try #require(try reader.notification(appId: F.appId, uuid: uuid))
                    return [record.outcome ?? "nil", record.processedAt.map { "\($0.millisecondsSince1970)" } ?? "nil"]
                }
            }
            let at = "\(F.at(2).millisecondsSince1970)"
            #expect(stored == [["applied", at], ["unclaimed", at], ["applied", at]])
            // A later finish at another instant is written.
            let again = try await store.write { tx in
                let id = try #require(try tx.notification(appId: F.appId, uuid: "as-presumed")).id
                return try tx.finishNotification(id: id, outcome: "applied", at: F.at(3))
            }
            #expect(again)
        }
    }
}
