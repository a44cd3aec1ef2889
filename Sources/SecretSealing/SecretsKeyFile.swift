import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A secrets key kept in a file: the base64 (or hex) of 32 bytes on one line, readable by its
/// owner only. A file other users may read or write is refused: the key would not be a secret.
/// - Note: Stateless; thread-safe.
public enum SecretsKeyFile {
    /// A key file is 45 bytes; anything above this is not one.
    public static let maximumSize = 1024

    public static func read(_ path: String) throws(SecretsError) -> SecretsKey {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw SecretsError(.keyFileUnreadable, "cannot open the secrets key file \(path): \(errnoText())")
        }
        defer { close(descriptor) }
        // Checked on the open descriptor, so the file checked is the file read.
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw SecretsError(.keyFileUnreadable, "cannot inspect the secrets key file \(path): \(errnoText())")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw SecretsError(.keyFileUnreadable, "the secrets key file \(path) is not a regular file")
        }
        let permissions = status.st_mode & 0o777
        guard permissions & 0o007 == 0 else {
            throw SecretsError(
                .keyFileInsecure,
                "the secrets key file \(path) is accessible to other users (mode \(String(permissions, radix: 8))); "
                    + "run chmod 600 \(path)")
        }
        guard status.st_size <= maximumSize else {
            throw SecretsError(.keyInvalid, "the secrets key file \(path) is larger than \(maximumSize) bytes")
        }
        var bytes = [UInt8](repeating: 0, count: maximumSize + 1)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { buffer in
                systemRead(descriptor, buffer.baseAddress! + count, buffer.count - count)
            }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else {
                throw SecretsError(.keyFileUnreadable, "cannot read the secrets key file \(path): \(errnoText())")
            }
            if got == 0 { break }
            count += got
        }
        guard count <= maximumSize else {
            throw SecretsError(.keyInvalid, "the secrets key file \(path) is larger than \(maximumSize) bytes")
        }
        return try SecretsKey(
            encoded: String(decoding: bytes.prefix(count), as: UTF8.self), source: "the secrets key file \(path)")
    }

    /// Generates a key and writes it to a new file with mode 0600; never replaces a file.
    public static func create(_ path: String) throws(SecretsError) -> SecretsKey {
        let key = try SecretsKey.generate()
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            if errno == EEXIST {
                throw SecretsError(.keyFileExists, "\(path) exists; a secrets key file is never overwritten")
            }
            throw SecretsError(.keyFileUnreadable, "cannot create the secrets key file \(path): \(errnoText())")
        }
        let line = Array((key.base64 + "\n").utf8)
        var written = 0
        var failure: String?
        while written < line.count {
            let count = line.withUnsafeBytes { buffer in
                write(descriptor, buffer.baseAddress! + written, buffer.count - written)
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                failure = errnoText()
                break
            }
            written += count
        }
        if failure == nil && fsync(descriptor) != 0 { failure = errnoText() }
        close(descriptor)
        if let failure {
            unlink(path)
            throw SecretsError(.keyFileUnreadable, "cannot write the secrets key file \(path): \(failure)")
        }
        return key
    }

    /// The key in `path`, created there first when the file does not exist (the demo's key).
    public static func readOrCreate(_ path: String) throws(SecretsError) -> (key: SecretsKey, created: Bool) {
        do {
            return (try create(path), true)
        } catch  where error.code == .keyFileExists {
            return (try read(path), false)
        }
    }

    /// `read(2)`, which this type's own `read(_:)` hides.
    private static func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
            Glibc.read(descriptor, buffer, count)
        #else
            Darwin.read(descriptor, buffer, count)
        #endif
    }

    private static func errnoText() -> String { String(cString: strerror(errno)) }
}
