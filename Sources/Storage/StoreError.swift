/// The one error type of the storage layer.
///
/// `code` is stable (callers and tests switch on it; the HTTP layer maps it to a status);
/// `detail` says which operation failed and what the engine reported, but never carries SQL
/// arguments, secrets or payloads: PostgreSQL messages of the data-exception and
/// constraint classes (which quote values) are replaced by their SQLSTATE and constraint name.
/// - Note: Immutable value; `Sendable`.
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// A unique key already holds this value.
        case duplicate
        /// The row asked for does not exist.
        case notFound
        /// A compare-and-set on a version lost: someone else saved first.
        case versionConflict
        /// The connection broke; the transaction did not commit. Retry.
        case connectionLost
        /// Serialization failure or deadlock; the transaction rolled back. Retry.
        case conflictRetry
        /// The statement timeout (or SQLite's busy timeout) expired; nothing committed.
        case timeout
        /// The database was migrated by a newer Storekeeper than this binary.
        case schemaTooNew
        /// The database lacks migrations this binary needs and was opened without migrating.
        case schemaOutdated
        /// A migration failed and was rolled back.
        case migrationFailed
        /// The connection string or an option is wrong.
        case invalidConfiguration
        /// A row violates a constraint other than a unique key (foreign key, check, not null).
        case constraintViolation
        /// A value no engine can hold as given (text with a NUL character): the input must
        /// change, so retrying cannot help.
        case unstorableValue
        /// A stored value could not be decoded (corrupt or written by an incompatible version).
        case corruptValue
        /// The store was closed.
        case closed
        /// Any other database failure.
        case database
    }

    public let code: Code
    /// Operation and engine diagnostics, free of arguments.
    public let detail: String

    /// The transaction was ended by the database itself (SQLite rolls back after some I/O and
    /// memory errors); `statement` names what was refused, if anything.
    static func transactionEnded(refusing statement: String? = nil) -> StoreError {
        StoreError(
            .database,
            (statement.map { "\($0): " } ?? "")
                + "the database ended the transaction (it was rolled back): nothing was kept")
    }

    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// Whether running the whole transaction again may succeed.
    public var isRetryable: Bool {
        switch code {
        case .connectionLost, .conflictRetry, .timeout: return true
        default: return false
        }
    }

    public var description: String { "storage.\(code.rawValue): \(detail)" }
}
