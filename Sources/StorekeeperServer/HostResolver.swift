import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a host name gave no addresses.
/// - Note: Immutable value; `Sendable`.
public enum HostResolutionFailure: Error, Sendable, Hashable {
    /// The name does not exist or has no address.
    case notFound
    /// No answer within the timeout.
    case timedOut
    /// Too many lookups are already waiting; try again later.
    case busy
    /// Any other resolver error.
    case failed
}

/// Turns a host name (or an address literal in any notation the C library accepts, such as
/// `127.1`) into the addresses a connection to it could reach. Webhook delivery checks every
/// one of them before connecting, and tests inject answers to play a DNS change.
/// - Note: Implementations must be safe to call from many tasks at once.
public protocol HostResolver: Sendable {
    func resolve(_ host: String) async throws(HostResolutionFailure) -> [IPAddress]
}

/// `getaddrinfo` from the C library (so `/etc/hosts`, the system's DNS configuration and
/// numeric forms behave as for any other program), run on its own dispatch queue because it
/// blocks, with a timeout and a bound on lookups waiting at once. A lookup that times out
/// keeps its thread until the C library gives up; its answer is then dropped.
/// - Note: Thread-safe: the count of waiting lookups sits behind a `Mutex`.
public final class SystemHostResolver: HostResolver {
    public let timeout: Duration
    public let maximumPending: Int
    private let queue = DispatchQueue(label: "storekeeper.host-resolver", attributes: .concurrent)
    private let pending = Mutex(0)

    public init(timeout: Duration = .seconds(5), maximumPending: Int = 16) {
        self.timeout = timeout
        self.maximumPending = max(1, maximumPending)
    }

    public func resolve(_ host: String) async throws(HostResolutionFailure) -> [IPAddress] {
        guard !host.isEmpty, host.utf8.count <= 253, !host.utf8.contains(0) else { throw .notFound }
        let admitted = pending.withLock { count in
            guard count < maximumPending else { return false }
            count += 1
            return true
        }
        guard admitted else { throw .busy }
        let answer = OnceAnswer()
        let result: Result<[IPAddress], HostResolutionFailure> = await withCheckedContinuation { continuation in
            answer.set(continuation)
            queue.async {
                let outcome = Self.lookup(host)
                self.pending.withLock { $0 -= 1 }
                answer.resume(with: outcome)
            }
            let (seconds, attoseconds) = timeout.components
            let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
            queue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
                answer.resume(with: .failure(.timedOut))
            }
        }
        return try result.get()
    }

    /// Every address `getaddrinfo` returns for `host` (both families, no `AI_ADDRCONFIG`, so no
    /// address another client of the resolver could get is left unchecked), in its order,
    /// without duplicates.
    static func lookup(_ host: String) -> Result<[IPAddress], HostResolutionFailure> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        defer { if let list { freeaddrinfo(list) } }
        guard status == 0 else {
            switch status {
            case EAI_NONAME, EAI_FAMILY: return .failure(.notFound)
            case EAI_AGAIN: return .failure(.timedOut)
            default: return .failure(.failed)
            }
        }
        var addresses: [IPAddress] = []
        var entry = list
        while let current = entry {
            if let socketAddress = current.pointee.ai_addr, let address = Self.address(socketAddress),
                !addresses.contains(address)
            {
                addresses.append(address)
            }
            entry = current.pointee.ai_next
        }
        return addresses.isEmpty ? .failure(.notFound) : .success(addresses)
    }

    private static func address(_ socketAddress: UnsafeMutablePointer<sockaddr>) -> IPAddress? {
        switch Int32(socketAddress.pointee.sa_family) {
        case AF_INET:
            return socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                var raw = v4.pointee.sin_addr
                return IPAddress(bytes: withUnsafeBytes(of: &raw) { Array($0) })
            }
        case AF_INET6:
            return socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                var raw = v6.pointee.sin6_addr
                return IPAddress(bytes: withUnsafeBytes(of: &raw) { Array($0) })
            }
        default:
            return nil
        }
    }
}

/// A continuation resumed by whichever of the lookup and the timeout comes first.
/// - Note: Thread-safe: the continuation sits behind a `Mutex` and is taken out once.
private final class OnceAnswer: Sendable {
    private let continuation = Mutex<CheckedContinuation<Result<[IPAddress], HostResolutionFailure>, Never>?>(nil)

    func set(_ value: CheckedContinuation<Result<[IPAddress], HostResolutionFailure>, Never>) {
        continuation.withLock { $0 = value }
    }

    func resume(with result: Result<[IPAddress], HostResolutionFailure>) {
        continuation.withLock { $0.take() }?.resume(returning: result)
    }
}
