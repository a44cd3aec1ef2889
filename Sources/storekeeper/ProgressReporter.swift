import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Progress of long work (`migrate`, `simulate run`, `backfill receipts`) on standard error.
///
/// On a terminal: one line rewritten in place (`\r`, erase line) at most ten times a second,
/// with the count, the total, the rate and the time left. Otherwise (a log file, a pipe): a
/// plain line each time another tenth of the total is done, and at least every `interval`
/// while work goes on, so a log shows progress without a flood. `finish` prints the last
/// line either way.
/// - Note: Thread-safe: the count and the last render sit behind a `Mutex`.
final class ProgressReporter: Sendable {
    enum Style: Sendable {
        case terminal
        case lines
    }

    private struct State {
        var done = 0
        var lastRender: Double = -.infinity
        var lastTenth = 0
        var finished = false
    }

    let label: String
    let total: Int?
    let style: Style
    /// Seconds between plain lines when no tenth was crossed.
    let interval: Double
    private let write: @Sendable (String) -> Void
    private let now: @Sendable () -> Double
    private let start: Double
    private let state = Mutex(State())

    /// `total`: the amount of work, when known (no percentage or ETA without it).
    init(
        label: String, total: Int?, style: Style? = nil, interval: Double = 10,
        write: @escaping @Sendable (String) -> Void = ProgressReporter.standardError,
        now: @escaping @Sendable () -> Double = ProgressReporter.monotonicSeconds
    ) {
        self.label = label
        self.total = total
        self.style = style ?? (isatty(STDERR_FILENO) != 0 ? .terminal : .lines)
        self.interval = interval
        self.write = write
        self.now = now
        let start = now()
        self.start = start
        // Plain lines wait for a tenth or the interval; a terminal shows the first item at once.
        if self.style == .lines { state.withLock { $0.lastRender = start } }
    }

    static let standardError: @Sendable (String) -> Void = { FileHandle.standardError.write(Data($0.utf8)) }

    static let monotonicSeconds: @Sendable () -> Double = {
        (ContinuousClock.now - origin) / .seconds(1)
    }
    private static let origin = ContinuousClock.now

    /// Counts `count` more items done and renders if it is time to.
    func advance(by count: Int = 1) {
        let instant = now()
        let text: String? = state.withLock { state in
            guard !state.finished else { return nil }
            state.done += count
            switch style {
            case .terminal:
                guard instant - state.lastRender >= 0.1 else { return nil }
                state.lastRender = instant
                return "\r\u{1B}[2K" + line(done: state.done, at: instant)
            case .lines:
                let tenth = total.map { $0 > 0 ? state.done * 10 / $0 : 10 } ?? 0
                guard tenth > state.lastTenth || instant - state.lastRender >= interval else { return nil }
                state.lastTenth = max(tenth, state.lastTenth)
                state.lastRender = instant
                // The last tenth is `finish`'s line.
                if let total, state.done >= total { return nil }
                return line(done: state.done, at: instant) + "\n"
            }
        }
        if let text { write(text) }
    }

    /// Shows the progress so far with `note` after it (what the work is doing while nothing is
    /// counted: a long migration), at the pace `advance` renders: on a terminal at most ten times
    /// a second, otherwise once `interval` has passed since the last line.
    func note(_ note: String) {
        let instant = now()
        let text: String? = state.withLock { state in
            guard !state.finished else { return nil }
            switch style {
            case .terminal:
                guard instant - state.lastRender >= 0.1 else { return nil }
                state.lastRender = instant
                return "\r\u{1B}[2K" + line(done: state.done, at: instant) + ", " + note
            case .lines:
                guard instant - state.lastRender >= interval else { return nil }
                state.lastRender = instant
                return line(done: state.done, at: instant) + ", " + note + "\n"
            }
        }
        if let text { write(text) }
    }

    /// The final line: the count, the time taken and the average rate. `interrupted` says the
    /// work stopped early (the line is printed as it stands).
    func finish(interrupted: Bool = false) {
        let instant = now()
        let text: String? = state.withLock { state in
            guard !state.finished else { return nil }
            state.finished = true
            let elapsed = max(instant - start, 0)
            var text = "\(label): \(count(state.done))"
            if interrupted { text += " (interrupted)" }
            text += " in \(Self.duration(elapsed)), \(Self.rate(Double(state.done), elapsed))/s"
            return (style == .terminal ? "\r\u{1B}[2K" : "") + text + "\n"
        }
        if let text { write(text) }
    }

    private func line(done: Int, at instant: Double) -> String {
        let elapsed = max(instant - start, 0)
        var text = "\(label): \(count(done))"
        if style == .terminal, let total, total > 0 {
            let filled = min(20, done * 20 / total)
            text =
                "\(label) [" + String(repeating: "#", count: filled) + String(repeating: ".", count: 20 - filled)
                + "] \(count(done))"
        }
        text += ", \(Self.rate(Double(done), elapsed))/s"
        if let total, done > 0, elapsed > 0 {
            let remaining = Double(max(total - done, 0)) / (Double(done) / elapsed)
            text += ", ETA \(Self.duration(remaining))"
        }
        return text
    }

    private func count(_ done: Int) -> String {
        guard let total else { return "\(done)" }
        let percent = total > 0 ? min(done * 100 / total, 100) : 100
        return "\(done)/\(total) (\(percent)%)"
    }

    static func rate(_ count: Double, _ seconds: Double) -> String {
        guard seconds > 0 else { return "0.0" }
        return String(format: "%.1f", count / seconds)
    }

    /// `42s`, `3m05s`, `1h02m`.
    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        if whole < 60 { return seconds < 10 ? String(format: "%.1fs", seconds) : "\(whole)s" }
        if whole < 3600 { return String(format: "%dm%02ds", whole / 60, whole % 60) }
        return String(format: "%dh%02dm", whole / 3600, whole % 3600 / 60)
    }
}
