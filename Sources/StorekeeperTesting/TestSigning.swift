import AppStoreModels
import AppStoreTrust
import Foundation

/// Builders for signed App Store–shaped payloads in tests: a generated CA, and raw token
/// assembly so a negative test can break exactly one rule.
public enum TestSigning {
    /// 2025-01-01T00:00:00Z … 2035-01-01T00:00:00Z: wide enough for every test date.
    public static let validFrom = Timestamp(millisecondsSince1970: 1_735_689_600_000)
    public static let validUntil = Timestamp(millisecondsSince1970: 2_051_222_400_000)
    /// A signedDate inside the validity window.
    public static let signedDate = Timestamp(millisecondsSince1970: 1_764_547_200_000)

    public static func authority(name: String = "Storekeeper Test") throws -> TestCertificateAuthority {
        try TestCertificateAuthority.generate(name: name, validFrom: validFrom, validUntil: validUntil)
    }

    public static func transaction(
        bundleId: String = "com.example", environment: AppStoreEnvironment = .sandbox,
        signedDate: Timestamp = signedDate, transactionId: String = "1000000001"
    ) -> JWSTransactionDecodedPayload {
        var payload = JWSTransactionDecodedPayload()
        payload.transactionId = transactionId
        payload.originalTransactionId = transactionId
        payload.bundleId = bundleId
        payload.productId = "com.example.monthly"
        payload.type = RawEnum(.autoRenewableSubscription)
        payload.environment = RawEnum(environment)
        payload.signedDate = signedDate
        payload.purchaseDate = signedDate
        payload.originalPurchaseDate = signedDate
        payload.expiresDate = signedDate.adding(milliseconds: 30 * 86_400_000)
        payload.inAppOwnershipType = RawEnum(.purchased)
        payload.quantity = 1
        payload.price = 9990
        payload.currency = "USD"
        return payload
    }

    public static func json<T: Encodable>(_ value: T) -> [UInt8] { [UInt8](AppStoreJSON.encode(value)) }

    /// Assembles a compact JWS from raw parts; signs `header.payload` with `key` unless a
    /// signature is given.
    public static func token(header: String, payload: [UInt8], key: PrivateKey?, signature: [UInt8]? = nil) throws
        -> String
    {
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(payload)
        let bytes = try signature ?? key!.signES256(Array(input.utf8))
        return input + "." + Base64URL.encode(bytes)
    }

    /// An App Store–shaped header with the given x5c certificates and algorithm.
    public static func header(alg: String = "ES256", chain: [Certificate]) -> String {
        let x5c = chain.map { "\"\(Data($0.der).base64EncodedString())\"" }.joined(separator: ",")
        return "{\"alg\":\"\(alg)\",\"typ\":\"JWT\",\"x5c\":[\(x5c)]}"
    }
}
