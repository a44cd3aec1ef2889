/// Why and how a subscription was canceled: exactly one member is set.
/// - Note: Immutable value; `Sendable`.
public struct CanceledStateContext: Sendable, Hashable, Codable {
    public var userInitiatedCancellation: UserInitiatedCancellation?
    public var systemInitiatedCancellation: SystemInitiatedCancellation?
    public var developerInitiatedCancellation: DeveloperInitiatedCancellation?
    public var replacementCancellation: ReplacementCancellation?

    public init(
        userInitiatedCancellation: UserInitiatedCancellation? = nil,
        systemInitiatedCancellation: SystemInitiatedCancellation? = nil,
        developerInitiatedCancellation: DeveloperInitiatedCancellation? = nil,
        replacementCancellation: ReplacementCancellation? = nil
    ) {
        self.userInitiatedCancellation = userInitiatedCancellation
        self.systemInitiatedCancellation = systemInitiatedCancellation
        self.developerInitiatedCancellation = developerInitiatedCancellation
        self.replacementCancellation = replacementCancellation
    }
}

/// The user canceled (from Play or the app); the survey answer when given.
/// - Note: Immutable value; `Sendable`.
public struct UserInitiatedCancellation: Sendable, Hashable, Codable {
    public var cancelSurveyResult: CancelSurveyResult?
    public var cancelTime: GoogleDateTime?

    public init(cancelSurveyResult: CancelSurveyResult? = nil, cancelTime: GoogleDateTime? = nil) {
        self.cancelSurveyResult = cancelSurveyResult
        self.cancelTime = cancelTime
    }
}

/// The cancellation survey's answer.
/// - Note: Immutable value; `Sendable`.
public struct CancelSurveyResult: Sendable, Hashable, Codable {
    public var reason: PlayRawEnum<CancelSurveyReason>?
    public var reasonUserInput: String?

    public init(reason: PlayRawEnum<CancelSurveyReason>? = nil, reasonUserInput: String? = nil) {
        self.reason = reason
        self.reasonUserInput = reasonUserInput
    }
}

/// `CancelSurveyResult.reason`.
public enum CancelSurveyReason: String, Sendable, Hashable, Codable, CaseIterable {
    case unspecified = "CANCEL_SURVEY_REASON_UNSPECIFIED"
    case notEnoughUsage = "CANCEL_SURVEY_REASON_NOT_ENOUGH_USAGE"
    case technicalIssues = "CANCEL_SURVEY_REASON_TECHNICAL_ISSUES"
    case costRelated = "CANCEL_SURVEY_REASON_COST_RELATED"
    case foundBetterApp = "CANCEL_SURVEY_REASON_FOUND_BETTER_APP"
    case others = "CANCEL_SURVEY_REASON_OTHERS"
}

/// Canceled by the system (a billing problem that was never fixed); an empty object.
public struct SystemInitiatedCancellation: Sendable, Hashable, Codable { public init() {} }

/// Canceled by the developer (the API's cancel or revoke); an empty object.
public struct DeveloperInitiatedCancellation: Sendable, Hashable, Codable { public init() {} }

/// Canceled because another purchase replaced it (upgrade or downgrade); an empty object.
public struct ReplacementCancellation: Sendable, Hashable, Codable { public init() {} }

/// A paused subscription resumes at `autoResumeTime`.
/// - Note: Immutable value; `Sendable`.
public struct PausedStateContext: Sendable, Hashable, Codable {
    public var autoResumeTime: GoogleDateTime?

    public init(autoResumeTime: GoogleDateTime? = nil) { self.autoResumeTime = autoResumeTime }
}

/// A subscription in its grace period: the renewal payment was declined.
/// - Note: Immutable value; `Sendable`.
public struct InGracePeriodStateContext: Sendable, Hashable, Codable {
    public var renewalDeclined: RenewalDeclinedContext?

    public init(renewalDeclined: RenewalDeclinedContext? = nil) { self.renewalDeclined = renewalDeclined }
}

/// A subscription on account hold: the renewal payment was declined and grace has ended.
/// - Note: Immutable value; `Sendable`.
public struct OnHoldStateContext: Sendable, Hashable, Codable {
    public var renewalDeclined: RenewalDeclinedContext?

    public init(renewalDeclined: RenewalDeclinedContext? = nil) { self.renewalDeclined = renewalDeclined }
}

/// The order whose payment was declined.
/// - Note: Immutable value; `Sendable`.
public struct RenewalDeclinedContext: Sendable, Hashable, Codable {
    public var pendingOrderId: String?

    public init(pendingOrderId: String? = nil) { self.pendingOrderId = pendingOrderId }
}
