/// Which recovery workers run for an app (stored in `AppSettings.recovery`). Each switch is on
/// by default when the app has an App Store Connect key (they all need the App Store Server
/// API) and can be turned off one by one.
/// - Note: Immutable value; `Sendable`.
public struct RecoverySwitches: Sendable, Hashable, Codable {
    /// Replay Get Notification History from the app's cursor (`nil`: default).
    public var historyReplay: Bool?
    /// Poll Get All Subscription Statuses for subscriptions that went quiet (`nil`: default).
    public var statusPolling: Bool?
    /// Answer `POST …/customers/{appUserId}/sync` (`nil`: default).
    public var onDemandSync: Bool?
    /// Poll Google Play's voided purchases (`nil`: default, on with a Play side).
    public var playVoidedPolling: Bool?
    /// Re-read Play subscriptions that went quiet past their expiry or in grace, hold or pause
    /// (`nil`: default, on with a Play side).
    public var playReread: Bool?

    public init(
        historyReplay: Bool? = nil, statusPolling: Bool? = nil, onDemandSync: Bool? = nil,
        playVoidedPolling: Bool? = nil, playReread: Bool? = nil
    ) {
        self.historyReplay = historyReplay
        self.statusPolling = statusPolling
        self.onDemandSync = onDemandSync
        self.playVoidedPolling = playVoidedPolling
        self.playReread = playReread
    }
}

/// A Google Play recovery worker an app can turn off. They need the Play Developer API, so
/// they run only for an app with a Play side holding a service-account key.
public enum PlayRecoveryWorker: String, Sendable, Hashable, CaseIterable {
    case playVoidedPolling
    case playReread
}

/// A recovery worker an app can turn off.
public enum RecoveryWorker: String, Sendable, Hashable, CaseIterable {
    case historyReplay
    case statusPolling
    case onDemandSync
}

extension AppSettings {
    /// Whether `worker` runs for the app: its switch, or on when the app has an App Store Connect key.
    public func runs(_ worker: RecoveryWorker) -> Bool {
        guard appStoreConnect != nil else { return false }
        let explicit: Bool?
        switch worker {
        case .historyReplay: explicit = recovery?.historyReplay
        case .statusPolling: explicit = recovery?.statusPolling
        case .onDemandSync: explicit = recovery?.onDemandSync
        }
        return explicit ?? true
    }
}

extension AppSettings {
    /// Whether the Play `worker` runs for the app, given whether it has a Play side with a
    /// service-account key: its switch, or on when it has one.
    public func runs(_ worker: PlayRecoveryWorker, hasPlaySide: Bool) -> Bool {
        guard hasPlaySide else { return false }
        switch worker {
        case .playVoidedPolling: return recovery?.playVoidedPolling ?? true
        case .playReread: return recovery?.playReread ?? true
        }
    }
}
