import AppStoreModels
import Foundation
import StorekeeperTesting
import Testing

@testable import AppStoreTrust

/// Random corruptions of valid signed input must end in a `TrustError` (or, for a change the
/// signature does not cover, the same verified payload), never a crash or another error type.
struct MutationTests {
    /// SplitMix64: a seeded generator so a failure names the case that reproduces it.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let alphabet = Array("ABCxyz019-_.=+/{}\":,[] \\\u{0}é".utf8)

    func mutate(_ bytes: [UInt8], using generator: inout SeededGenerator) -> [UInt8] {
        var result = bytes
        for _ in 0..<Int.random(in: 1...4, using: &generator) {
            guard !result.isEmpty else { break }
            let index = Int.random(in: 0..<result.count, using: &generator)
            switch Int.random(in: 0..<4, using: &generator) {
            case 0: result[index] = Self.alphabet.randomElement(using: &generator)!
            case 1: result.remove(at: index)
            case 2: result.insert(Self.alphabet.randomElement(using: &generator)!, at: index)
            default: result = Array(result.prefix(index))
            }
        }
        return result
    }

    @Test func mutatedTokensNeverCrashOrVerifyForged() throws {
        let ca = try TestSigning.authority()
        let verifier = try SignedDataVerifier(
            rootCertificates: [ca.root], bundleId: "com.example", appAppleId: nil, environment: .sandbox)
        let original = TestSigning.transaction()
        let token = try ca.signer.sign(original)
        let seed = UInt64(0x5EED_0002)
        var generator = SeededGenerator(state: seed)
        for iteration in 0..<3_000 {
            let mutated = String(decoding: mutate(Array(token.utf8), using: &generator), as: UTF8.self)
            do {
                let verified = try verifier.verifyAndDecodeTransaction(mutated)
                // Only edits that leave the signed bytes' meaning intact may verify.
                #expect(verified.payload == original, "seed \(seed) iteration \(iteration) verified a forged payload")
            } catch {
                #expect(!error.detail.isEmpty, "seed \(seed) iteration \(iteration)")
            }
        }
    }

    @Test func mutatedReceiptsNeverCrash() throws {
        let ca = try TestSigning.authority()
        var builder = AppReceiptBuilder()
        builder.set(2, .string("com.example"))
        builder.set(12, AppReceiptBuilder.date(TestSigning.signedDate))
        builder.inAppPurchases = [[(1702, .string("p")), (1703, .string("1")), (1701, .integer(1))]]
        let der = try builder.signed(certificate: ca.leaf, key: ca.leafKey, chain: [ca.intermediate])
        let seed = UInt64(0x5EED_0003)
        var generator = SeededGenerator(state: seed)
        for _ in 0..<1_000 {
            let mutated = mutate(der, using: &generator)
            if let receipt = try? AppReceipt(der: mutated) {
                _ = try? receipt.verifySignature(roots: [ca.root])
            }
        }
    }
}
