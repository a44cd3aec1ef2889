/// A stretch of days during which an app was in the App Store Small Business Program, so
/// Apple took its reduced commission on every purchase.
/// - Note: Immutable value; `Sendable`.
public struct SmallBusinessProgramPeriod: Sendable, Hashable, Codable {
    /// First day in the program.
    public var from: CalendarDay
    /// Last day in the program (included); `nil` while the app is still a member.
    public var to: CalendarDay?

    public init(from: CalendarDay, to: CalendarDay?) {
        self.from = from
        self.to = to
    }

    public func contains(_ day: CalendarDay) -> Bool { day >= from && (to.map { day <= $0 } ?? true) }

    /// `to`, when given, is not before `from`.
    public var isValid: Bool { to.map { $0 >= from } ?? true }
}
