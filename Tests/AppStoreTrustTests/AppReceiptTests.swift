import AppStoreModels
import Foundation
import StorekeeperTesting
import Testing

@testable import AppStoreTrust

struct AppReceiptTests {
    /// Receipt dates are read and written without ICU in Apple's form; both agree with
    /// Foundation's ISO 8601 formatter to the second, over four centuries of random instants.
    @Test func receiptDatesAgreeWithFoundationsFormatter() {
        let formatter = ISO8601DateFormatter()
        var generator = SystemRandomNumberGenerator()
        var seconds: [Int64] = [0, -1, 951_782_400, 951_868_799, 4_107_542_399, -62_135_596_800]
        for _ in 0..<2_000 { seconds.append(Int64.random(in: -5_000_000_000...8_000_000_000, using: &generator)) }
        for second in seconds {
            let date = Date(timeIntervalSince1970: TimeInterval(second))
            let text = formatter.string(from: date)
            #expect(ReceiptDates.format(Timestamp(millisecondsSince1970: second * 1000 + 999)) == text)
            if second >= -12_212_553_600 {  // 1583-01-01: before it, the formatter alone reads (Julian)
                #expect(
                    ReceiptDates.parseUTCSeconds(text) == Timestamp(millisecondsSince1970: second * 1000), "\(text)")
            }
            #expect(ReceiptDates.parse(text) == Timestamp(date))
        }
        // Impossible or other forms are left to the formatter.
        for text in [
            "2026-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01 00:00:00Z",
            "2026-01-01T00:00:00+01:00", "2026-01-01T00:00:00.500Z", "２026-01-01T00:00:00Z",
        ] {
            #expect(ReceiptDates.parseUTCSeconds(text) == nil, "\(text)")
        }
        #expect(ReceiptDates.parse("2026-01-01T00:00:00.500Z") == Timestamp(millisecondsSince1970: 1_767_225_600_500))
        #expect(ReceiptDates.parse("2024-02-29T23:59:59Z") == Timestamp(millisecondsSince1970: 1_709_251_199_000))
    }

    /// The receipt builder asks the formatter only about text shaped like an RFC 3339 date: every
    /// date the formatters write has that shape, and the builder's other values (ids, versions,
    /// near-misses) do not. ICU reads some near-misses leniently (`2026/01/01T…`, full-width
    /// digits); they are no RFC 3339 dates, and the builder writes them as text.
    @Test func onlyTextShapedLikeADateIsParsedByTheBuilder() {
        let plain = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let offset = ISO8601DateFormatter()
        offset.timeZone = TimeZone(secondsFromGMT: 5 * 3_600 + 30 * 60)
        var dates: [String] = []
        for _ in 0..<500 {
            let date = Date(timeIntervalSince1970: TimeInterval(Int64.random(in: -5_000_000_000...8_000_000_000)))
            dates += [plain.string(from: date), fractional.string(from: date), offset.string(from: date)]
        }
        for text in dates {
            #expect(ReceiptDates.parse(text) != nil, "\(text)")
            #expect(ReceiptDates.hasDateShape(text), "\(text)")
        }
        let notDates = [
            "", "com.example.app", "monthly", "1.0", "1000000001", "2026-01-01", "2026-01-01 00:00:00Z",
            "20260101T00:00:00Z00", "2026/01/01T00:00:00Z", "２026-01-01T00:00:00Z", "x026-01-01T00:00:00Z",
            "2026-01-01t00:00:00Z",
        ]
        for text in notDates {
            #expect(!ReceiptDates.hasDateShape(text), "\(text)")
        }
    }

    @Test(.enabled(if: Conformance.isAvailable, "conformance corpus absent"))
    func xcodeReceiptDecodesBERWithNestedOctetStrings() throws {
        let receipt = try AppReceipt(
            base64OrDER: Array(Conformance.text("xcode/xcode-app-receipt-with-transaction").utf8))
        #expect(receipt.receiptType == "Xcode")
        #expect(receipt.bundleId == "com.example.naturelab.backyardbirds.example")
        #expect(receipt.applicationVersion == "1")
        #expect(receipt.receiptCreationDate == Timestamp(millisecondsSince1970: 1_697_679_940_000))
        #expect(receipt.transactionIds == ["0"])
        let purchase = try #require(receipt.inAppPurchases.first)
        #expect(purchase.quantity == 1)
        #expect(purchase.productId == "pass.premium")
        #expect(purchase.transactionId == "0")
        #expect(purchase.purchaseDate == Timestamp(millisecondsSince1970: 1_697_679_936_000))
        #expect(purchase.expiresDate == Timestamp(millisecondsSince1970: 1_700_358_336_000))
        #expect(purchase.isInIntroOfferPeriod == true)
        #expect(Set(receipt.attributes.keys) == [0, 1, 2, 3, 4, 5, 8, 12, 21])
    }

    @Test(.enabled(if: Conformance.isAvailable, "conformance corpus absent"))
    func emptyXcodeReceiptHasNoTransactions() throws {
        let receipt = try AppReceipt(base64OrDER: Array(Conformance.text("xcode/xcode-app-receipt-empty").utf8))
        #expect(receipt.transactionIds.isEmpty)
        #expect(receipt.inAppPurchases.isEmpty)
    }

    @Test(.enabled(if: Conformance.isAvailable, "conformance corpus absent"))
    func xcodeReceiptSignatureVerifiesAgainstItsOwnSigner() throws {
        let receipt = try AppReceipt(
            base64OrDER: Array(Conformance.text("xcode/xcode-app-receipt-with-transaction").utf8))
        // Xcode signs with a self-signed "StoreKit" certificate: trusting it verifies, trusting
        // another root does not.
        let signer = try #require(receipt.embeddedCertificates().first)
        #expect(signer.subject.contains("CN=StoreKit"))
        let check = try receipt.verifySignature(roots: [signer])
        #expect(check.signerChain.first?.contains("CN=StoreKit") == true)
        #expect(throws: TrustError.self) { _ = try receipt.verifySignature(roots: [TestSigning.authority().root]) }
    }

    @Test(.enabled(if: Conformance.isAvailable, "conformance corpus absent"))
    func legacyTransactionReceiptYieldsItsId() throws {
        #expect(
            try ReceiptTransactionIds.fromTransactionReceipt(Conformance.text("mock_signed_data/legacyTransaction"))
                == ["33993399"])
    }

    func sampleReceipt() -> AppReceiptBuilder {
        var builder = AppReceiptBuilder()
        builder.set(0, .string("ProductionSandbox"))
        builder.set(2, .string("com.example"))
        builder.set(3, .string("42"))
        builder.set(4, .bytes([1, 2, 3, 4]))
        builder.set(5, .bytes(Array(repeating: 0xAB, count: 20)))
        builder.set(12, AppReceiptBuilder.date(TestSigning.signedDate))
        builder.set(19, .string("1.0"))
        builder.inAppPurchases = [
            [
                (1701, .integer(1)), (1702, .string("com.example.monthly")), (1703, .string("2000000001")),
                (1705, .string("2000000000")), (1704, AppReceiptBuilder.date(TestSigning.signedDate)),
                (1708, AppReceiptBuilder.date(TestSigning.signedDate.adding(milliseconds: 2_592_000_000))),
                (1711, .integer(555)), (1713, .integer(0)), (1719, .integer(1)),
            ],
            [
                (1701, .integer(1)), (1702, .string("com.example.lifetime")), (1703, .string("2000000002")),
                (1705, .string("2000000002")), (1712, .string("")),
            ],
        ]
        return builder
    }

    @Test(arguments: [AppReceiptBuilder.Digest.sha1, .sha256])
    func signedReceiptRoundTripsAndVerifiesAtCreationDate(digest: AppReceiptBuilder.Digest) throws {
        let ca = try TestSigning.authority()
        let der = try sampleReceipt().signed(
            certificate: ca.leaf, key: ca.leafKey, chain: [ca.intermediate], digest: digest)
        let receipt = try AppReceipt(base64OrDER: Array(Data(der).base64EncodedString().utf8))
        #expect(receipt.bundleId == "com.example")
        #expect(receipt.opaqueValue == [1, 2, 3, 4])
        #expect(receipt.sha1Hash == Array(repeating: 0xAB, count: 20))
        #expect(receipt.originalApplicationVersion == "1.0")
        #expect(receipt.receiptCreationDate == TestSigning.signedDate)
        // DER sorts SET OF members by encoding, so receipt order is not insertion order.
        #expect(receipt.transactionIds.sorted() == ["2000000001", "2000000002"])
        let first = try #require(receipt.inAppPurchases.first { $0.transactionId == "2000000001" })
        #expect(first.originalTransactionId == "2000000000")
        #expect(first.webOrderLineItemId == 555)
        #expect(first.isTrialPeriod == false)
        #expect(first.isInIntroOfferPeriod == true)
        #expect(first.expiresDate == TestSigning.signedDate.adding(milliseconds: 2_592_000_000))
        #expect(receipt.inAppPurchases.first { $0.transactionId == "2000000002" }?.cancellationDate == nil)

        let check = try receipt.verifySignature(roots: [ca.root])
        #expect(check.validatedAt == TestSigning.signedDate)
        #expect(check.signerChain.first?.contains("Receipt Signing") == true)

        let other = try TestSigning.authority(name: "Other")
        #expect(throws: TrustError.self) { _ = try receipt.verifySignature(roots: [other.root]) }
        let afterExpiry = TestSigning.validUntil.adding(milliseconds: 1000)
        #expect(throws: TrustError.self) { _ = try receipt.verifySignature(roots: [ca.root], at: afterExpiry) }
    }

    @Test func tamperedReceiptFailsSignature() throws {
        let ca = try TestSigning.authority()
        var der = try sampleReceipt().signed(certificate: ca.leaf, key: ca.leafKey, chain: [ca.intermediate])
        let needle = Array("com.example.monthly".utf8)
        let index = try #require(
            (0..<(der.count - needle.count)).first { Array(der[$0..<$0 + needle.count]) == needle })
        der[index] = UInt8(ascii: "C")
        let receipt = try AppReceipt(der: der)
        #expect(receipt.inAppPurchases.contains { $0.productId == "Com.example.monthly" })
        do {
            _ = try receipt.verifySignature(roots: [ca.root])
            Issue.record("tampered receipt verified")
        } catch {
            #expect(error.rule == .receiptSignatureInvalid)
        }
    }

    @Test(arguments: [
        [UInt8](), [0x30], [0x30, 0x80, 0x00], Array("%%%not base64".utf8), [UInt8](repeating: 0x30, count: 64),
    ])
    func garbageIsRefusedWithoutCrashing(bytes: [UInt8]) {
        #expect(throws: TrustError.self) { _ = try AppReceipt(base64OrDER: bytes) }
    }

    @Test func truncatedReceiptsAreRefused() throws {
        let ca = try TestSigning.authority()
        let der = try sampleReceipt().signed(certificate: ca.leaf, key: ca.leafKey, chain: [])
        for length in stride(from: 0, to: der.count, by: 37) {
            #expect(throws: TrustError.self) { _ = try AppReceipt(der: Array(der.prefix(length))) }
        }
    }
}
