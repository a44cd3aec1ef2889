import COpenSSL

/// Drains OpenSSL's thread-local error queue into one line, so a failure names its cause
/// and a stale error never leaks into the next call on the same thread. `package`: the Google
/// Play trust module shares these OpenSSL helpers.
package enum OpenSSLFailure {
    package static func drain() -> String {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(string(fromNulTerminated: buffer))
        }
        return messages.isEmpty ? "unknown OpenSSL error" : messages.joined(separator: "; ")
    }

    static func clear() { ERR_clear_error() }
}

/// Runs `body` with a memory BIO over `bytes`; the BIO never outlives the call.
package func withMemoryBIO<R>(_ bytes: [UInt8], _ body: (OpaquePointer) throws -> R) rethrows -> R? {
    try bytes.withUnsafeBytes { raw -> R? in
        guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
        defer { BIO_free(bio) }
        return try body(bio)
    }
}

/// Reads everything written into a memory BIO.
package func memoryBIOContents(_ bio: OpaquePointer) -> [UInt8] {
    var pointer: UnsafeMutablePointer<CChar>?
    let length = COpenSSL_BIO_get_mem_data(bio, &pointer)
    guard let pointer, length > 0 else { return [] }
    return pointer.withMemoryRebound(to: UInt8.self, capacity: length) {
        Array(UnsafeBufferPointer(start: $0, count: length))
    }
}

/// Serializes an OpenSSL object with an `i2d_*` function.
func derEncode(_ encode: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32) -> [UInt8]? {
    let length = encode(nil)
    guard length > 0 else { return nil }
    var bytes = [UInt8](repeating: 0, count: Int(length))
    let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
        var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
        return encode(&cursor)
    }
    return written == length ? bytes : nil
}

/// Text of a NUL-terminated C buffer.
func string(fromNulTerminated buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
