extension Migration {
    /// A V2 notification's `signedPayload` keeps its JWS header once too, as `0029_jws_headers`
    /// does for transactions: the row holds the digest in `signed_payload_header_digest` and the
    /// rest in `signed_payload`. The transaction and renewal info nested in the payload stay in
    /// it (they are part of the signed bytes). V1 bodies (JSON, not a JWS) and rows stored
    /// before are kept whole, with a NULL digest.
    static let notificationJWSHeaders = Migration(
        identifier: "0030_notification_jws_headers",
        sqlite: """
            ALTER TABLE notifications ADD COLUMN signed_payload_header_digest TEXT;
            """,
        postgres: """
            ALTER TABLE notifications ADD COLUMN signed_payload_header_digest TEXT;
            """)
}
