import COpenSSL
import Foundation

/// Base64url without padding (RFC 7515 §2), strict on input: only the url-safe alphabet,
/// no padding, no whitespace, a length that base64 allows, and zero unused bits in the last
/// character (RFC 4648 §3.5), so one byte string has exactly one accepted text: a token changed
/// in those bits is refused rather than read as the original. Decoding maps the alphabet to
/// standard base64 and lets OpenSSL's `EVP_DecodeBlock` do the work: this sits on the hot path
/// of every verification.
public enum Base64URL {
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        // Straight from the alphabet, three bytes to four characters: the round trip through
        // Foundation's base64 and then stripping and replacing was a sixth of the simulator's
        // signing time.
        let input = Array(bytes)
        let full = input.count / 3 * 3
        let tail = input.count - full
        let length = input.count / 3 * 4 + (tail == 0 ? 0 : tail + 1)
        return String(unsafeUninitializedCapacity: length) { output in
            var out = 0
            var index = 0
            while index < full {
                let value = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                output[out] = alphabet[Int(value >> 18 & 63)]
                output[out + 1] = alphabet[Int(value >> 12 & 63)]
                output[out + 2] = alphabet[Int(value >> 6 & 63)]
                output[out + 3] = alphabet[Int(value & 63)]
                out += 4
                index += 3
            }
            if tail > 0 {
                let second = tail == 2 ? UInt32(input[index + 1]) : 0
                let value = UInt32(input[index]) << 16 | second << 8
                output[out] = alphabet[Int(value >> 18 & 63)]
                output[out + 1] = alphabet[Int(value >> 12 & 63)]
                out += 2
                if tail == 2 {
                    output[out] = alphabet[Int(value >> 6 & 63)]
                    out += 1
                }
            }
            return out
        }
    }

    private static let alphabet: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    public static func decode(_ text: Substring) -> [UInt8]? { decode(bytes: Array(text.utf8)[...]) }

    public static func decode(_ text: String) -> [UInt8]? { decode(bytes: Array(text.utf8)[...]) }

    /// Decodes base64url ASCII bytes; nil for anything outside the strict form.
    static func decode(bytes input: ArraySlice<UInt8>) -> [UInt8]? {
        let remainder = input.count % 4
        guard remainder != 1 else { return nil }
        let padding = remainder == 0 ? 0 : 4 - remainder
        var standard = [UInt8](repeating: UInt8(ascii: "="), count: input.count + padding)
        var index = 0
        for byte in input {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                standard[index] = byte
            case UInt8(ascii: "-"): standard[index] = UInt8(ascii: "+")
            case UInt8(ascii: "_"): standard[index] = UInt8(ascii: "/")
            default: return nil
            }
            index += 1
        }
        if standard.isEmpty { return [] }
        // The last character of a 2- or 3-character group carries 4 or 2 unused low bits.
        if remainder != 0 {
            let value = Self.sextet(standard[input.count - 1])
            let unusedMask: UInt8 = remainder == 2 ? 0b1111 : 0b11
            guard value & unusedMask == 0 else { return nil }
        }
        var output = [UInt8](repeating: 0, count: standard.count / 4 * 3)
        let written = output.withUnsafeMutableBufferPointer { out in
            standard.withUnsafeBufferPointer { EVP_DecodeBlock(out.baseAddress, $0.baseAddress, Int32($0.count)) }
        }
        guard written == Int32(output.count) else { return nil }
        output.removeLast(padding)
        return output
    }

    /// The 6-bit value of a standard-alphabet base64 character (already validated).
    private static func sextet(_ byte: UInt8) -> UInt8 {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        default: 63
        }
    }
}
