import AppStoreModels
import StorekeeperTesting
import Testing

@testable import AppStoreTrust

struct VerifiedChainCacheTests {
    @Test func repeatedVerificationsReuseOneChain() throws {
        let ca = try TestSigning.authority()
        let clock = FixedClock(TestSigning.signedDate)
        let cache = VerifiedChainCache(capacity: 2, maximumAgeSeconds: 60)
        let verifier = try SignedDataVerifier(
            rootCertificates: [ca.root], bundleId: "com.example", appAppleId: nil, environment: .sandbox,
            cache: cache, clock: clock.function)
        let first = try verifier.verifyAndDecodeTransaction(ca.signer.sign(TestSigning.transaction(transactionId: "1")))
        let second = try verifier.verifyAndDecodeTransaction(
            ca.signer.sign(TestSigning.transaction(transactionId: "2")))
        #expect(cache.count == 1)
        // Same chain object: the second verification did not rebuild it.
        #expect(first.chain?.leafKey === second.chain?.leafKey)

        // A cached chain is still refused outside its validity window.
        let late = TestSigning.transaction(signedDate: TestSigning.validUntil.adding(milliseconds: 1))
        #expect(throws: TrustError.self) { _ = try verifier.verifyAndDecodeTransaction(ca.signer.sign(late)) }

        // Past the maximum age the entry is dropped and the chain validated again.
        clock.advance(milliseconds: 61_000)
        let third = try verifier.verifyAndDecodeTransaction(ca.signer.sign(TestSigning.transaction(transactionId: "3")))
        #expect(third.chain?.leafKey !== first.chain?.leafKey)
    }

    @Test func capacityIsBounded() throws {
        let clock = FixedClock(TestSigning.signedDate)
        let cache = VerifiedChainCache(capacity: 2, maximumAgeSeconds: 600)
        for index in 0..<5 {
            let ca = try TestSigning.authority(name: "CA \(index)")
            let verifier = try SignedDataVerifier(
                rootCertificates: [ca.root], bundleId: "com.example", appAppleId: nil, environment: .sandbox,
                cache: cache, clock: clock.function)
            _ = try verifier.verifyAndDecodeTransaction(ca.signer.sign(TestSigning.transaction()))
            clock.advance(milliseconds: 1)
        }
        #expect(cache.count == 2)
    }

    @Test func cacheSharedAcrossRootsNeverLeaksTrust() throws {
        let ca = try TestSigning.authority()
        let other = try TestSigning.authority(name: "Other")
        let cache = VerifiedChainCache()
        let trusting = try SignedDataVerifier(
            rootCertificates: [ca.root], bundleId: "com.example", appAppleId: nil, environment: .sandbox, cache: cache)
        let distrusting = try SignedDataVerifier(
            rootCertificates: [other.root], bundleId: "com.example", appAppleId: nil, environment: .sandbox,
            cache: cache)
        let token = try ca.signer.sign(TestSigning.transaction())
        _ = try trusting.verifyAndDecodeTransaction(token)
        #expect(throws: TrustError.self) { _ = try distrusting.verifyAndDecodeTransaction(token) }
    }
}
