import AppStoreModels
import Foundation

/// How long store periods last.
///
/// `.calendar` is the production App Store: a month is a calendar month (UTC). `accelerated`
/// is Apple's sandbox idea — the clock keeps real time (so signed dates stay plausible for a
/// server that compares them with its own clock) but every store duration shrinks: with one
/// month = 5 minutes, a week lasts 70 s, the 72-hour notification retry 30 s, the 60-day billing
/// retry 10 minutes. Compression is linear in months (a day is 1/30 of a month).
/// - Note: Immutable value; `Sendable`.
public struct TimeScale: Sendable, Hashable, Codable {
    /// nil for calendar time; otherwise the length of one month in milliseconds.
    public let millisecondsPerMonth: Int64?

    public init(millisecondsPerMonth: Int64?) { self.millisecondsPerMonth = millisecondsPerMonth }

    public static let calendar = TimeScale(millisecondsPerMonth: nil)

    /// One month lasts `monthSeconds` real seconds (Apple's sandbox: 300).
    public static func accelerated(monthSeconds: Double) -> TimeScale {
        TimeScale(millisecondsPerMonth: Int64((monthSeconds * 1000).rounded()))
    }

    /// `instant` + `period`: calendar arithmetic in UTC, or compressed linear time.
    public func adding(_ period: StorePeriod, to instant: Timestamp) -> Timestamp {
        if let millisecondsPerMonth {
            return instant.adding(
                milliseconds: Int64((period.approximateMonths * Double(millisecondsPerMonth)).rounded()))
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let components = DateComponents(
            year: period.years, month: period.months, day: period.weeks * 7 + period.days)
        // Adding date components to a valid date always has an answer in the Gregorian calendar.
        let date = calendar.date(byAdding: components, to: instant.date)!
        // Whole seconds move; the instant's milliseconds are kept exactly.
        let delta = (date.timeIntervalSince1970 - instant.date.timeIntervalSince1970) * 1000
        return instant.adding(milliseconds: Int64(delta.rounded()))
    }

    /// A duration Apple states in days (grace period, billing retry, renewal extensions).
    public func milliseconds(days: Double) -> Int64 {
        milliseconds(hours: days * 24)
    }

    /// A duration Apple states in hours (the notification retry schedule).
    public func milliseconds(hours: Double) -> Int64 {
        guard let millisecondsPerMonth else { return Int64((hours * 3_600_000).rounded()) }
        return Int64((hours / (30 * 24) * Double(millisecondsPerMonth)).rounded())
    }
}
