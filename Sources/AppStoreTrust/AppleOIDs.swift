/// Object identifiers Apple puts in its App Store signing certificates.
public enum AppleOIDs {
    /// Marks Apple Worldwide Developer Relations intermediates (`x5c[1]`).
    public static let wwdrIntermediate = "1.2.840.113635.100.6.2.1"
    /// Marks App Store receipt-signing leaves (`x5c[0]`).
    public static let receiptSigningLeaf = "1.2.840.113635.100.6.11.1"
    /// SHA-256 of the DER of Apple Root CA - G3, the root of StoreKit 2 signatures.
    public static let appleRootCAG3SHA256 = "63343abfb89a6a03ebb57e9b3f5fa7be7c4f5c756f3017b3a8c488c3653e9179"
}
