import Storage

/// Runs the jobs of one kind from the durable `jobs` queue. The loop that claims them, leases
/// them and reschedules them with backoff is the server's `JobWorker`; a handler only does the
/// work of one job and says how it ended.
///
/// A handler that changes facts completes its job in the same transaction as the change
/// (`FactBatch.completesJob`), so a job is applied once even if two workers end up running it:
/// the second one's commit finds the lease gone and rolls back.
/// - Note: Implementations must be `Sendable` and safe to run concurrently.
public protocol JobHandler: Sendable {
    /// The `jobs.kind` this handler runs.
    var kind: String { get }
    /// Runs one claimed job under `lease`.
    func run(_ job: JobRecord, lease: JobLease) async -> JobOutcome
}

/// A claimed job: its id and the worker holding it, which is what completing or failing it
/// checks.
/// - Note: Immutable value; `Sendable`.
public struct JobLease: Sendable, Hashable {
    public var jobId: Int64
    public var owner: String

    public init(jobId: Int64, owner: String) {
        self.jobId = jobId
        self.owner = owner
    }
}

/// How one run of a job ended. Reasons are for the job row and the audit log: codes and
/// messages, never secrets.
/// - Note: Immutable value; `Sendable`.
public enum JobOutcome: Sendable, Hashable {
    /// Done: the handler marked the job complete together with its effects.
    case completed
    /// Could not be done now (a dependency is unavailable, a race was lost): try again later.
    case retry(String)
    /// Refused on the merits (Apple answered 4xx, the data failed verification): worth a few
    /// more tries only (Apple may not have caught up with a new purchase yet).
    case refused(String)
    /// Can never succeed (unreadable payload, the app is gone): fail at once.
    case failed(String)
}
