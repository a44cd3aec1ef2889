import CMicroHTTPD
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Request ids: accepted from the client's `X-Request-Id` when well-formed, generated otherwise.
///
/// A client-supplied id is used only if it is 1...128 characters of `A-Z a-z 0-9 - _ . :`, so
/// it is safe to echo in headers and logs (no spaces, quotes, control characters or CR/LF).
/// - Note: Stateless; safe from any thread.
public enum RequestID {
    /// The header carrying the request id, in both directions.
    public static let headerName = "X-Request-Id"

    /// Whether a client-supplied id may be used as is.
    public static func isValid(_ candidate: String) -> Bool {
        let utf8 = candidate.utf8
        guard (1...128).contains(utf8.count) else { return false }
        return utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"),
                UInt8(ascii: "."), UInt8(ascii: ":"):
                true
            default:
                false
            }
        }
    }

    /// A fresh random id: a lowercase version 4 UUID.
    ///
    /// Built here rather than with Foundation's `UUID`, which opens and reads `/dev/urandom` for
    /// every id: the random bytes come from the system generator (`getrandom`) in batches.
    public static func generate() -> String {
        var (high, low) = randomPool.withLock { $0.next() }
        high = (high & ~0xF000) | 0x4000  // version 4
        low = (low & ~(0xC000 << 48)) | (0x8000 << 48)  // RFC 4122 variant
        return String(unsafeUninitializedCapacity: 36) { buffer in
            let digits: StaticString = "0123456789abcdef"
            var index = 0
            func put(_ value: UInt64, nibbles: Int) {
                for shift in stride(from: (nibbles - 1) * 4, through: 0, by: -4) {
                    buffer[index] = digits.utf8Start[Int(value >> UInt64(shift) & 0xF)]
                    index += 1
                }
            }
            func dash() {
                buffer[index] = UInt8(ascii: "-")
                index += 1
            }
            put(high >> 32, nibbles: 8)
            dash()
            put(high >> 16, nibbles: 4)
            dash()
            put(high, nibbles: 4)
            dash()
            put(low >> 48, nibbles: 4)
            dash()
            put(low, nibbles: 12)
            return index
        }
    }

    /// The client's id if valid, else a fresh one.
    public static func resolve(from headers: HTTPHeaders) -> String {
        if let sent = headers[headerName], isValid(sent) { return sent }
        return generate()
    }
}

/// Random bytes for request ids, fetched from the system generator 4 KiB at a time.
private let randomPool = Locked(RandomPool())

/// A buffer of random bytes handed out 16 at a time.
/// - Note: Not thread-safe by itself; used behind `randomPool`'s lock.
private struct RandomPool {
    private var words = [UInt64](repeating: 0, count: 512)
    private var position = 512

    /// The next 128 random bits.
    mutating func next() -> (UInt64, UInt64) {
        if position + 2 > words.count {
            words.withUnsafeMutableBytes { buffer in
                var filled = 0
                while filled < buffer.count {
                    let count = CMicroHTTPD_getrandom(buffer.baseAddress! + filled, buffer.count - filled)
                    if count > 0 {
                        filled += count
                    } else if errno != EINTR {
                        // No kernel generator (never on supported systems): the stdlib's.
                        var generator = SystemRandomNumberGenerator()
                        for offset in stride(from: filled, to: buffer.count, by: 1) {
                            buffer[offset] = generator.next()
                        }
                        filled = buffer.count
                    }
                }
            }
            position = 0
        }
        defer { position += 2 }
        return (words[position], words[position + 1])
    }
}
