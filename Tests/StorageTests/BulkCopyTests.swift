import AppStoreModels
import Entitlements
import Foundation
import Testing

@testable import Storage

private typealias F = IngestionFixture
private typealias J = JWSHeaderStorageTests

/// PostgreSQL's bulk transaction inserts go by `COPY` when none of their keys is held: the
/// text format's escapes, and rows stored exactly as single inserts store them, whichever way
/// the batch went.
@Suite("Bulk inserts by COPY")
struct BulkCopyTests {
    @Test("COPY's text format escapes backslash, tab, newline and return; NULL is \\N")
    func copyTextEscapes() throws {
        var text = PostgresCopyText()
        try text.append(row: [.text("a\\b\tc\nd\re"), .null, .integer(-42), .text(""), .text("\\N"), .text("é☃.x")])
        try text.append(row: [.text("plain"), .integer(0), .null, .text("\"q\""), .text("\\\\"), .text("\r\n")])
        #expect(
            String(decoding: text.bytes, as: UTF8.self)
                == "a\\\\b\\tc\\nd\\re\t\\N\t-42\t\t\\\\N\té☃.x\n" + "plain\t0\t\\N\t\"q\"\t\\\\\\\\\t\\r\\n\n")
        #expect(text.rows == 2)
        #expect(throws: StoreError.self) {
            try text.append(row: [.text("a\u{0}b"), .null, .null, .null, .null, .null])
        }
    }

    /// Texts every part of a row can hold: escapes of COPY's format and of JSON, and UTF-8.
    static let awkward = ["back\\slash", "tab\there", "new\nline", "return\rhere", "quote\"d", "\\N", "", "é☃🙂"]

    /// `count` transactions of one purchase: JWS with a chain stored apart, a short header kept
    /// whole, none, or an awkward text; awkward texts in the fact's free members and the source.
    static func transactions(_ count: Int, from first: Int = 0) -> [NewTransaction] {
        (first..<first + count).map { index in
            let jws: String? =
                switch index % 4 {
                case 0: J.jws(header: J.chainA, seed: UInt64(index))
                case 1: J.jws(header: J.short, seed: UInt64(index))
                case 2: nil
                default: awkward[index % awkward.count] + ".x"
                }
            var transaction = J.transaction(index, jws: jws)
            transaction.fact.storefront = awkward[(index + 1) % awkward.count]
            transaction.fact.offerIdentifier = awkward[(index + 2) % awkward.count]
            transaction.source = "api" + awkward[(index + 3) % awkward.count]
            return transaction
        }
    }

    /// Every column of every stored transaction, in the order written, and each raw JWS read back.
    static func stored(_ store: any Store, customer: Int64) async throws -> [[SQLValue]] {
        let rows = try await store.read { reader in
            try reader.sql(
                """
                SELECT \(SQLStoreTransaction.transactionColumns.joined(separator: ", "))
                FROM signed_transactions ORDER BY id
                """
            ).map(\.values)
        }
        let raws = try await store.read { reader in
            try reader.storedFacts(customerId: customer, kind: .transaction, after: nil, limit: 1_000).map {
                SQLValue($0.raw)
            }
        }
        return zip(rows, raws).map { $0 + [$1] }
    }

    @Test(
        "a bulk insert stores what single inserts store; PostgreSQL copies unless a key is held",
        arguments: Backend.enabled)
    func bulkMatchesSingle(backend: Backend) async throws {
        let batch = Self.transactions(200)
        var single: [[SQLValue]] = []
        try await withStore(backend) { store, _ in
            let customer = try await J.owner(store)
            try await store.write { tx in
                for transaction in batch {
                    let insertion = try tx.insertTransaction(transaction)
                    #expect(!insertion.isDuplicate)
                }
            }
            single = try await Self.stored(store, customer: customer)
        }
        #expect(single.count == 200)
        #expect(single.map(\.last) == batch.map { SQLValue($0.jws) })
        let copies = backend == .postgres

        try await withStore(backend) { store, _ in
            let customer = try await J.owner(store)
            let (inserted, copied) = try await store.write { tx in
                let sql = try #require(tx as? SQLStoreTransaction)
                return (try sql.insertTransactions(batch), sql.rowsCopied)
            }
            #expect(inserted == 200)
            #expect(copied == (copies ? 200 : 0))
            #expect(try await Self.stored(store, customer: customer) == single)

            // The same rows again: the copy meets a held key, is taken back, and the INSERTs
            // skip every row.
            let again = try await store.write { tx in
                let sql = try #require(tx as? SQLStoreTransaction)
                return [try sql.insertTransactions(batch), sql.rowsCopied]
            }
            #expect(again == [0, 0])
            #expect(try await Self.stored(store, customer: customer) == single)

            // New rows with one held key among them, and a key given twice (the first kept):
            // only the new rows, each once.
            let more = Self.transactions(100, from: 200)
            let twice = NewTransaction(
                appId: F.appId, jws: "other.jws", fact: more[7].fact, source: "api", receivedAt: F.now)
            let mixed = try await store.write { tx in
                let sql = try #require(tx as? SQLStoreTransaction)
                return [try sql.insertTransactions([batch[3]] + more + [twice]), sql.rowsCopied]
            }
            #expect(mixed == [100, 0])
            let after = try await Self.stored(store, customer: customer)
            #expect(after.count == 300)
            #expect(after.prefix(200) == single[...])
            #expect(after.suffix(100).map(\.last) == more.map { SQLValue($0.jws) })
        }
    }

    @Test("a copy that breaks a constraint fails as the INSERTs would", arguments: Backend.enabled)
    func constraintFailure(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            _ = try await J.owner(store)
            // An app the store does not know: its foreign key fails, and nothing is stored.
            let stray = Self.transactions(80).map {
                var transaction = $0
                transaction.appId = "no-such-app"
                return transaction
            }
            await #expect {
                try await store.write { tx in try tx.insertTransactions(stray) }
            } throws: { error in
                (error as? StoreError)?.code == .constraintViolation
            }
            #expect(try await store.read { try $0.count("signed_transactions") } == 0)
        }
    }
}
