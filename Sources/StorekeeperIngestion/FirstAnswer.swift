import Synchronization

/// The first of several answers offered by racing tasks: whoever offers first is the answer,
/// later offers are dropped, and `value()` returns as soon as one is in, without waiting for
/// the others to finish (unlike a task group, which awaits every child).
/// - Note: Thread-safe: the state sits behind a `Mutex`; offer from any task.
final class FirstAnswer<Answer: Sendable>: Sendable {
    private struct State {
        var answer: Answer?
        var waiter: CheckedContinuation<Answer, Never>?
    }

    private let state = Mutex(State())

    /// Keeps `answer` if it is the first; hands it to a waiting `value()`.
    func offer(_ answer: Answer) {
        let waiter = state.withLock { state -> CheckedContinuation<Answer, Never>? in
            guard state.answer == nil else { return nil }
            state.answer = answer
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: answer)
    }

    /// The first answer, once offered. Call once.
    func value() async -> Answer {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Answer? in
                if let answer = state.answer { return answer }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
