import AppStoreModels
import AppStoreTrust
import Foundation
import Storage

/// The migration from verifyReceipt: an export of `appUserId<TAB>base64 receipt` lines from a
/// verifyReceipt-era backend, imported line by line for one app
/// (`storekeeper backfill receipts`).
///
/// Each line is parsed (`parse`), skipped when it was imported before (the `backfill_lines`
/// table, written with the line's facts), and otherwise imported through
/// `PurchaseIngestor.backfillReceipt`: the receipt verified locally, its purchases fetched from
/// the App Store through the app's rate-limited connection, the facts committed through the one
/// commit path. A line is never imported twice, however often the run is interrupted.
/// - Note: Immutable and `Sendable`; `importLine` may run concurrently for different lines.
public struct ReceiptBackfill: Sendable {
    public let ingestion: Ingestion
    public let appId: String
    /// Where to ask Apple; `nil`: each receipt's own environment.
    public let environment: AppStoreEnvironment?

    public init(ingestion: Ingestion, appId: String, environment: AppStoreEnvironment? = nil) {
        self.ingestion = ingestion
        self.appId = appId
        self.environment = environment
    }

    /// The longest line accepted: a 256-byte user id, a tab, and the base64 of the largest
    /// receipt `AppReceipt` reads.
    public static let maximumLineBytes = 256 + 1 + (AppReceipt.maximumSize + 2) / 3 * 4

    /// A line of the export, checked.
    public struct Line: Sendable, Hashable {
        public var appUserId: String
        public var receipt: String
        /// SHA-256 (hex) of the line as read (without its line break): the line's identity.
        public var digest: String
    }

    /// Why a line was refused before anything was asked: a stable rule code and a message.
    public struct Refusal: Error, Sendable, Hashable {
        public var rule: String
        public var message: String

        public static let noTab = Refusal(rule: "line.noTab", message: "expected appUserId<TAB>base64 receipt")
        public static let tooLong = Refusal(
            rule: "line.tooLong", message: "the line exceeds \(ReceiptBackfill.maximumLineBytes) bytes")
        public static let invalidUser = Refusal(
            rule: "line.invalidAppUserId", message: "appUserId must be 1 to 256 printable characters")
        public static let notBase64 = Refusal(rule: "line.notBase64", message: "the receipt is not base64")
        public static let notUTF8 = Refusal(rule: "line.notUTF8", message: "the line is not UTF-8")
    }

    /// What became of one line.
    public enum Outcome: Sendable, Hashable {
        case imported
        case duplicate
        /// Refused by a rule (a line format rule, or a trust rule of the receipt): retrying the
        /// same line will not help.
        case refused(rule: String, message: String)
        /// The import failed (Apple unavailable, rate limited, the database, a configuration
        /// problem): `code` is the `IngestionError` code; the line can be retried.
        case failed(code: String, message: String)
    }

    /// Parses one line (without its line break; a trailing CR is dropped). Lines longer than
    /// `maximumLineBytes` should be refused by the reader with `Refusal.tooLong` before this.
    public static func parse(_ bytes: some Collection<UInt8>) -> Result<Line, Refusal> {
        var bytes = Array(bytes)
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        guard bytes.count <= maximumLineBytes else { return .failure(.tooLong) }
        guard let tab = bytes.firstIndex(of: UInt8(ascii: "\t")) else { return .failure(.noTab) }
        guard let appUserId = String(validating: bytes[..<tab], as: UTF8.self) else { return .failure(.notUTF8) }
        guard CustomerIdentity.isValidAppUserId(appUserId) else { return .failure(.invalidUser) }
        let receiptBytes = bytes[(tab + 1)...]
        guard !receiptBytes.isEmpty, receiptBytes.count % 4 == 0,
            receiptBytes.allSatisfy(Self.isBase64Byte),
            let receipt = String(validating: receiptBytes, as: UTF8.self),
            Data(base64Encoded: receipt) != nil
        else { return .failure(.notBase64) }
        return .success(Line(appUserId: appUserId, receipt: receipt, digest: Digest.hex(Digest.sha256(bytes))))
    }

    private static func isBase64Byte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="):
            return true
        default: return false
        }
    }

    /// Imports one parsed line; never throws: every failure is an `Outcome`.
    public func importLine(_ line: Line) async -> Outcome {
        let appId = appId
        let digest = line.digest
        do {
            // Skipped before asking Apple: a resumed run spends no rate on what is done.
            if try await ingestion.store.read({ try $0.backfillLineImported(appId: appId, lineDigest: digest) }) {
                return .duplicate
            }
        } catch {
            return Self.outcome(IngestionError.store(error))
        }
        do throws(IngestionError) {
            let app = try await ingestion.apps.runtime(appId: appId)
            switch try await ingestion.purchases.backfillReceipt(
                app: app, appUserId: line.appUserId, receipt: line.receipt, lineDigest: digest,
                environment: environment)
            {
            case .imported: return .imported
            case .duplicate: return .duplicate
            }
        } catch {
            return Self.outcome(error)
        }
    }

    /// A trust refusal (or a receipt Apple calls invalid) is the line's fault: `refused` with
    /// the rule; anything else may pass on a later run: `failed` with the code.
    static func outcome(_ error: IngestionError) -> Outcome {
        switch error.code {
        case .verificationFailed, .receiptInvalid, .appStoreDataRejected:
            return .refused(rule: error.rule ?? error.code.rawValue, message: error.message)
        default:
            return .failed(code: error.code.rawValue, message: error.message)
        }
    }
}
