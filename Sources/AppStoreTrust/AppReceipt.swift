import AppStoreModels
import COpenSSL
import Foundation
import Synchronization

/// One attribute value of an app receipt as found in its ASN.1: text (UTF8String /
/// IA5String), an integer, or other bytes (opaque value, SHA-1 hash).
public enum ReceiptValue: Sendable, Hashable, Codable {
    case string(String)
    case integer(Int64)
    case bytes([UInt8])

    public var string: String? { if case .string(let value) = self { value } else { nil } }
    public var integer: Int64? { if case .integer(let value) = self { value } else { nil } }

    /// Receipt dates are RFC 3339 text (`2023-10-19T01:45:36Z`); empty means absent.
    public var timestamp: Timestamp? {
        guard let text = string, !text.isEmpty else { return nil }
        return ReceiptDates.parse(text)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .bytes(let value): try container.encode(Data(value).base64EncodedString())
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else {
            self = .string(try container.decode(String.self))
        }
    }
}

/// RFC 3339 receipt dates. A formatter is costly to make (ICU; a receipt holds several dates,
/// a backfill reads thousands of receipts) and is not documented as safe to share between
/// threads: one of each kind, used under a lock.
enum ReceiptDates {
    private static let plain = Mutex(ISO8601DateFormatter())
    private static let fractional = Mutex(
        {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return formatter
        }())

    static func parse(_ text: String) -> Timestamp? {
        if let fast = parseUTCSeconds(text) { return fast }
        if let date = plain.withLock({ $0.date(from: text) }) { return Timestamp(date) }
        return fractional.withLock { $0.date(from: text) }.map(Timestamp.init)
    }

    /// Whether `text` begins as every RFC 3339 date does (`yyyy-MM-ddT`, ASCII digits). Text
    /// without it is no receipt date and needs no formatter (which reads some such text
    /// leniently, `2026/01/01T…` among them).
    static func hasDateShape(_ text: String) -> Bool {
        let bytes = text.utf8
        guard bytes.count >= 20 else { return false }
        for (index, byte) in bytes.prefix(11).enumerated() {
            switch index {
            case 4, 7: if byte != UInt8(ascii: "-") { return false }
            case 10: if byte != UInt8(ascii: "T") { return false }
            default: if !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { return false }
            }
        }
        return true
    }

    static func format(_ timestamp: Timestamp) -> String {
        let milliseconds = timestamp.millisecondsSince1970
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let (year, month, day) = CivilDate.date(fromDays: days)
        guard (1583...9999).contains(year) else { return plain.withLock { $0.string(from: timestamp.date) } }
        let time = seconds - days * 86_400
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let paddedYear = String(repeating: "0", count: 4 - String(year).count) + String(year)
        return "\(paddedYear)-\(two(month))-\(two(day))T\(two(time / 3600)):\(two(time / 60 % 60)):\(two(time % 60))Z"
    }

    /// The form Apple's receipts use, `yyyy-MM-ddTHH:mm:ssZ`, read without ICU: the date
    /// formatter was a twentieth of a backfill's time. Anything else (or an impossible date)
    /// is left to the formatter, and so are years before 1583: the formatter's calendar is
    /// Julian before the Gregorian reform, this reading proleptic Gregorian.
    static func parseUTCSeconds(_ text: String) -> Timestamp? {
        let bytes = Array(text.utf8)
        guard bytes.count == 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            bytes[19] == UInt8(ascii: "Z")
        else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for index in range {
                let digit = bytes[index] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                value = value * 10 + Int64(digit)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            year >= 1583, (1...12).contains(month), day >= 1, hour < 24, minute < 60, second < 60
        else { return nil }
        let days = CivilDate.days(year: year, month: month, day: day)
        guard CivilDate.date(fromDays: days) == (year, month, day) else { return nil }
        return Timestamp(millisecondsSince1970: ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000)
    }
}

/// One in-app purchase record (attribute 17) of an app receipt.
/// - Note: Immutable value; `Sendable`.
public struct AppReceiptInAppPurchase: Sendable, Hashable, Codable {
    /// Every attribute by its numeric type, including ones Apple has not documented.
    public let attributes: [Int: ReceiptValue]

    public var quantity: Int64? { attributes[1701]?.integer }
    public var productId: String? { attributes[1702]?.string }
    public var transactionId: String? { attributes[1703]?.string }
    public var purchaseDate: Timestamp? { attributes[1704]?.timestamp }
    public var originalTransactionId: String? { attributes[1705]?.string }
    public var originalPurchaseDate: Timestamp? { attributes[1706]?.timestamp }
    public var expiresDate: Timestamp? { attributes[1708]?.timestamp }
    public var webOrderLineItemId: Int64? { attributes[1711]?.integer }
    public var cancellationDate: Timestamp? { attributes[1712]?.timestamp }
    public var isTrialPeriod: Bool? { attributes[1713]?.integer.map { $0 != 0 } }
    public var isInIntroOfferPeriod: Bool? { attributes[1719]?.integer.map { $0 != 0 } }
    public var promotionalOfferId: String? { attributes[1721]?.string }

    enum CodingKeys: String, CodingKey {
        case quantity, productId, transactionId, purchaseDate, originalTransactionId, originalPurchaseDate
        case expiresDate, webOrderLineItemId, cancellationDate, isTrialPeriod, isInIntroOfferPeriod
        case promotionalOfferId, attributes
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(quantity, forKey: .quantity)
        try container.encodeIfPresent(productId, forKey: .productId)
        try container.encodeIfPresent(transactionId, forKey: .transactionId)
        try container.encodeIfPresent(purchaseDate, forKey: .purchaseDate)
        try container.encodeIfPresent(originalTransactionId, forKey: .originalTransactionId)
        try container.encodeIfPresent(originalPurchaseDate, forKey: .originalPurchaseDate)
        try container.encodeIfPresent(expiresDate, forKey: .expiresDate)
        try container.encodeIfPresent(webOrderLineItemId, forKey: .webOrderLineItemId)
        try container.encodeIfPresent(cancellationDate, forKey: .cancellationDate)
        try container.encodeIfPresent(isTrialPeriod, forKey: .isTrialPeriod)
        try container.encodeIfPresent(isInIntroOfferPeriod, forKey: .isInIntroOfferPeriod)
        try container.encodeIfPresent(promotionalOfferId, forKey: .promotionalOfferId)
        try container.encode(
            Dictionary(uniqueKeysWithValues: attributes.map { (String($0.key), $0.value) }), forKey: .attributes)
    }

    public init(attributes: [Int: ReceiptValue]) { self.attributes = attributes }

    public init(from decoder: any Decoder) throws {
        let raw = try decoder.container(keyedBy: CodingKeys.self).decode(
            [String: ReceiptValue].self, forKey: .attributes)
        attributes = Dictionary(uniqueKeysWithValues: raw.compactMap { key, value in Int(key).map { ($0, value) } })
    }
}

/// A StoreKit 1 app receipt: a PKCS#7 SignedData (BER, indefinite lengths allowed) whose
/// content is a SET of (type, version, value) attributes. Parsed with OpenSSL's PKCS#7 and
/// ASN.1 decoders; no DER is read by hand.
/// - Note: Immutable value; `Sendable`.
public struct AppReceipt: Sendable, Hashable {
    /// Receipts are a few KiB, even with thousands of purchases well under this.
    public static let maximumSize = 4 << 20

    public let attributes: [Int: ReceiptValue]
    public let inAppPurchases: [AppReceiptInAppPurchase]
    /// The PKCS#7 bytes as received.
    public let pkcs7: [UInt8]

    public var receiptType: String? { attributes[0]?.string }
    public var appItemId: Int64? { attributes[1]?.integer }
    public var bundleId: String? { attributes[2]?.string }
    public var applicationVersion: String? { attributes[3]?.string }
    public var opaqueValue: [UInt8]? { if case .bytes(let value)? = attributes[4] { value } else { nil } }
    public var sha1Hash: [UInt8]? { if case .bytes(let value)? = attributes[5] { value } else { nil } }
    public var receiptCreationDate: Timestamp? { attributes[12]?.timestamp }
    public var originalPurchaseDate: Timestamp? { attributes[18]?.timestamp }
    public var originalApplicationVersion: String? { attributes[19]?.string }
    public var expirationDate: Timestamp? { attributes[21]?.timestamp }

    /// Every transaction id in the receipt, in receipt order (Apple's ReceiptUtility returns one).
    public var transactionIds: [String] { inAppPurchases.compactMap(\.transactionId) }

    /// Decodes a receipt from DER/BER bytes or from its base64 text.
    public init(base64OrDER bytes: [UInt8]) throws(TrustError) {
        var der = bytes
        if let first = bytes.first, first != 0x30 {
            let text = String(decoding: bytes, as: UTF8.self).filter { !$0.isWhitespace }
            guard let decoded = Data(base64Encoded: text) else {
                throw TrustError(.receiptMalformed, "receipt is neither DER nor base64")
            }
            der = [UInt8](decoded)
        }
        try self.init(der: der)
    }

    public init(der: [UInt8]) throws(TrustError) {
        guard !der.isEmpty, der.count <= Self.maximumSize else {
            throw TrustError(.receiptMalformed, "receipt of \(der.count) bytes is outside 1…\(Self.maximumSize)")
        }
        let content = try Self.withPKCS7(der) { (pkcs7) throws(TrustError) -> [UInt8] in
            guard let octets = COpenSSL_PKCS7_signed_data_content(pkcs7) else {
                throw TrustError(.receiptMalformed, "receipt is not PKCS#7 SignedData with id-data content")
            }
            return Self.bytes(of: octets)
        }
        let top = try Self.attributeSet(content)
        var attributes: [Int: ReceiptValue] = [:]
        var purchases: [AppReceiptInAppPurchase] = []
        for (type, value) in top {
            if type == 17 {
                guard case .bytes(let set) = value else {
                    throw TrustError(.receiptMalformed, "in-app attribute is not a SET")
                }
                let fields = try Self.attributeSet(set)
                purchases.append(
                    AppReceiptInAppPurchase(attributes: Dictionary(fields, uniquingKeysWith: { first, _ in first })))
            } else if attributes[type] == nil {
                attributes[type] = value
            }
        }
        self.attributes = attributes
        self.inAppPurchases = purchases
        self.pkcs7 = der
    }

    // MARK: Signature

    /// The outcome of checking the receipt's PKCS#7 signature.
    public struct SignatureCheck: Sendable, Hashable {
        /// Subjects of the signer's certificate chain as built, leaf first.
        public let signerChain: [String]
        public let validatedAt: Timestamp
    }

    /// Verifies the PKCS#7 signature and the signer's chain to one of `roots` at the receipt
    /// creation date (or `at`, when given). SHA-1 and SHA-256 receipts are both accepted.
    public func verifySignature(roots: [Certificate], at instant: Timestamp? = nil) throws(TrustError) -> SignatureCheck
    {
        guard let when = instant ?? receiptCreationDate else {
            throw TrustError(.receiptMalformed, "receipt has no creation date to validate at")
        }
        guard !roots.isEmpty else { throw TrustError(.noTrustedRoots, "no receipt root certificates configured") }
        let bytes = pkcs7
        return try Self.withPKCS7(bytes) { (pkcs7) throws(TrustError) -> SignatureCheck in
            guard let store = X509_STORE_new() else { throw TrustError(.receiptMalformed, "OpenSSL allocation failed") }
            defer { X509_STORE_free(store) }
            for root in roots { X509_STORE_add_cert(store, root.handle) }
            OpenSSLFailure.clear()
            let parameters = X509_STORE_get0_param(store)
            X509_VERIFY_PARAM_set_time(parameters, time_t(when.secondsSince1970))
            // Receipt signers carry no S/MIME usage; the chain and signature are what matter.
            X509_VERIFY_PARAM_set_purpose(parameters, X509_PURPOSE_ANY)
            guard PKCS7_verify(pkcs7, nil, store, nil, nil, Int32(PKCS7_BINARY)) == 1 else {
                let reason = OpenSSLFailure.drain()
                if reason.contains("certificate verify error") {
                    throw TrustError(
                        .receiptChainUntrusted, "receipt signer does not chain to a trusted root at \(when): \(reason)")
                }
                throw TrustError(.receiptSignatureInvalid, "receipt signature invalid: \(reason)")
            }
            var subjects: [String] = []
            if let signers = PKCS7_get0_signers(pkcs7, nil, 0) {
                defer { COpenSSL_sk_X509_free(signers) }
                for index in 0..<OPENSSL_sk_num(signers) {
                    if let signer = OPENSSL_sk_value(signers, index) {
                        subjects.append(Certificate.name(X509_get_subject_name(OpaquePointer(signer))))
                    }
                }
            }
            if let certificates = COpenSSL_PKCS7_certificates(pkcs7) {
                for index in 0..<OPENSSL_sk_num(certificates) {
                    if let certificate = OPENSSL_sk_value(certificates, index) {
                        let subject = Certificate.name(X509_get_subject_name(OpaquePointer(certificate)))
                        if !subjects.contains(subject) { subjects.append(subject) }
                    }
                }
            }
            return SignatureCheck(signerChain: subjects, validatedAt: when)
        }
    }

    /// The certificates embedded in the PKCS#7 (signer and intermediates), for reporting.
    public func embeddedCertificates() throws(TrustError) -> [Certificate] {
        try Self.withPKCS7(pkcs7) { (pkcs7) throws(TrustError) -> [Certificate] in
            guard let stack = COpenSSL_PKCS7_certificates(pkcs7) else { return [] }
            var result: [Certificate] = []
            for index in 0..<OPENSSL_sk_num(stack) {
                guard let x509 = OPENSSL_sk_value(stack, index),
                    let der = derEncode({ i2d_X509(OpaquePointer(x509), $0) })
                else { continue }
                result.append(try Certificate(der: der))
            }
            return result
        }
    }

    // MARK: OpenSSL plumbing

    private static func withPKCS7<R>(_ der: [UInt8], _ body: (UnsafeMutablePointer<PKCS7>) throws(TrustError) -> R)
        throws(TrustError) -> R
    {
        let parsed: UnsafeMutablePointer<PKCS7>? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PKCS7(nil, &cursor, buffer.count)
        }
        guard let pkcs7 = parsed else {
            OpenSSLFailure.clear()
            throw TrustError(.receiptMalformed, "receipt is not a PKCS#7 structure")
        }
        defer { PKCS7_free(pkcs7) }
        guard COpenSSL_PKCS7_is_signed(pkcs7) == 1 else {
            throw TrustError(.receiptMalformed, "receipt PKCS#7 is not SignedData")
        }
        return try body(pkcs7)
    }

    static func bytes(of string: UnsafePointer<ASN1_STRING>) -> [UInt8] {
        let length = Int(ASN1_STRING_length(string))
        guard length > 0, let data = ASN1_STRING_get0_data(string) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: length))
    }

    /// Decodes a DER SET of SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }.
    static func attributeSet(_ der: [UInt8]) throws(TrustError) -> [(Int, ReceiptValue)] {
        let set: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_ASN1_SET_ANY(nil, &cursor, buffer.count)
        }
        guard let set else {
            OpenSSLFailure.clear()
            throw TrustError(.receiptMalformed, "receipt payload is not an ASN.1 SET")
        }
        defer { COpenSSL_sk_ASN1_TYPE_pop_free(set) }
        var result: [(Int, ReceiptValue)] = []
        for index in 0..<OPENSSL_sk_num(set) {
            guard let element = OPENSSL_sk_value(set, index).map({ UnsafePointer<ASN1_TYPE>(OpaquePointer($0)) }),
                ASN1_TYPE_get(element) == V_ASN1_SEQUENCE, let sequence = COpenSSL_ASN1_TYPE_string(element)
            else { throw TrustError(.receiptMalformed, "receipt attribute is not a SEQUENCE") }
            result.append(try attribute(bytes(of: sequence)))
        }
        return result
    }

    private static func attribute(_ der: [UInt8]) throws(TrustError) -> (Int, ReceiptValue) {
        let fields: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_ASN1_SEQUENCE_ANY(nil, &cursor, buffer.count)
        }
        guard let fields else { throw TrustError(.receiptMalformed, "receipt attribute is not a SEQUENCE") }
        defer { COpenSSL_sk_ASN1_TYPE_pop_free(fields) }
        guard OPENSSL_sk_num(fields) == 3,
            let typeField = OPENSSL_sk_value(fields, 0).map({ UnsafePointer<ASN1_TYPE>(OpaquePointer($0)) }),
            let valueField = OPENSSL_sk_value(fields, 2).map({ UnsafePointer<ASN1_TYPE>(OpaquePointer($0)) }),
            ASN1_TYPE_get(typeField) == V_ASN1_INTEGER, ASN1_TYPE_get(valueField) == V_ASN1_OCTET_STRING,
            let typeInteger = COpenSSL_ASN1_TYPE_string(typeField), let octets = COpenSSL_ASN1_TYPE_string(valueField)
        else { throw TrustError(.receiptMalformed, "receipt attribute is not (INTEGER, INTEGER, OCTET STRING)") }
        var type: Int64 = 0
        guard ASN1_INTEGER_get_int64(&type, typeInteger) == 1, (0...Int64(Int32.max)).contains(type) else {
            throw TrustError(.receiptMalformed, "receipt attribute type is out of range")
        }
        return (Int(type), value(bytes(of: octets)))
    }

    /// The attribute value is itself DER: a string or integer Apple documents, or raw bytes.
    private static func value(_ der: [UInt8]) -> ReceiptValue {
        let parsed: UnsafeMutablePointer<ASN1_TYPE>? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let result = d2i_ASN1_TYPE(nil, &cursor, buffer.count)
            // Only a value that consumes every byte is a typed value; anything else is opaque.
            if let result, cursor != buffer.baseAddress! + buffer.count {
                ASN1_TYPE_free(result)
                return nil
            }
            return result
        }
        guard let parsed else {
            OpenSSLFailure.clear()
            return .bytes(der)
        }
        defer { ASN1_TYPE_free(parsed) }
        switch ASN1_TYPE_get(parsed) {
        case V_ASN1_UTF8STRING, V_ASN1_IA5STRING:
            guard let string = COpenSSL_ASN1_TYPE_string(parsed) else { return .bytes(der) }
            return .string(String(decoding: bytes(of: string), as: UTF8.self))
        case V_ASN1_INTEGER:
            var number: Int64 = 0
            guard let integer = COpenSSL_ASN1_TYPE_string(parsed), ASN1_INTEGER_get_int64(&number, integer) == 1 else {
                OpenSSLFailure.clear()
                return .bytes(der)
            }
            return .integer(number)
        default:
            return .bytes(der)
        }
    }
}

/// Finds transaction ids in what StoreKit 1 apps send, as Apple's ReceiptUtility does but
/// returning every id instead of one.
public enum ReceiptTransactionIds {
    /// All transaction ids of an app receipt (base64 or DER).
    public static func fromAppReceipt(_ bytes: [UInt8]) throws(TrustError) -> [String] {
        try AppReceipt(base64OrDER: bytes).transactionIds
    }

    /// Ids from an old-style transaction receipt: base64 of a plist-text dictionary with a
    /// base64 `purchase-info` dictionary holding `transaction-id`.
    public static func fromTransactionReceipt(_ base64: String) throws(TrustError) -> [String] {
        guard base64.utf8.count <= AppReceipt.maximumSize,
            let outer = Data(base64Encoded: base64.filter { !$0.isWhitespace }).map({
                String(decoding: $0, as: UTF8.self)
            })
        else { throw TrustError(.receiptMalformed, "transaction receipt is not base64") }
        var ids: [String] = []
        for purchaseInfo in captures(#""purchase-info"\s+=\s+"([a-zA-Z0-9+/=]+)";"#, in: outer) {
            guard let inner = Data(base64Encoded: purchaseInfo).map({ String(decoding: $0, as: UTF8.self) }) else {
                continue
            }
            ids += captures(#""transaction-id"\s+=\s+"([a-zA-Z0-9+/=]+)";"#, in: inner)
        }
        return ids
    }

    private static func captures(_ pattern: String, in text: String) -> [String] {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        let range = NSRange(text.startIndex..., in: text)
        return regex.matches(in: text, range: range).compactMap { match in
            Range(match.range(at: 1), in: text).map { String(text[$0]) }
        }
    }
}
