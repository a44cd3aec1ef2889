#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The process's open-file limit must leave room for every connection the server may hold:
/// otherwise, under a connection flood, `accept` fails (and so do database and outgoing
/// connections) long before `connectionLimit` is reached. Starting a server raises the soft
/// limit (`RLIMIT_NOFILE`) as far as needed, which the hard limit allows any process to do.
enum FileDescriptorBudget {
    /// Descriptors kept for everything but client connections: the listen socket, each worker's
    /// epoll and wake-up descriptors, database files and connections, outgoing HTTP clients,
    /// logs.
    static let reserve = 256

    /// The soft limit to set, or nil when `soft` is already enough.
    /// - Throws: `config.fileDescriptors` when even `hard` is too low.
    static func softLimit(forConnectionLimit connectionLimit: Int, soft: UInt64, hard: UInt64) throws(HTTPServerError)
        -> UInt64?
    {
        let needed = UInt64(connectionLimit) + UInt64(reserve)
        if soft >= needed { return nil }
        guard hard >= needed else {
            throw HTTPServerError(
                code: "config.fileDescriptors",
                message:
                    "connectionLimit \(connectionLimit) needs \(needed) open files but the process may open at most "
                    + "\(hard) (ulimit -Hn); lower connectionLimit or raise the limit")
        }
        return needed
    }

    /// Raises the soft open-file limit to fit `connectionLimit` connections plus the reserve.
    static func ensure(connectionLimit: Int) throws(HTTPServerError) {
        var limit = rlimit()
        #if os(Linux)
            let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
            let resource = RLIMIT_NOFILE
        #endif
        // Unknown limits are left to the kernel: accept then fails with EMFILE, as before.
        guard getrlimit(resource, &limit) == 0 else { return }
        guard
            let soft = try softLimit(
                forConnectionLimit: connectionLimit, soft: UInt64(limit.rlim_cur), hard: UInt64(limit.rlim_max))
        else { return }
        limit.rlim_cur = rlim_t(soft)
        guard setrlimit(resource, &limit) == 0 else {
            throw HTTPServerError(
                code: "config.fileDescriptors",
                message: "could not raise the open-file limit to \(soft) for connectionLimit \(connectionLimit)")
        }
    }
}
