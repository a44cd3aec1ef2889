import AppStoreModels
import AppStoreSimulator
import Foundation
import GooglePlayModels
import GooglePlayTrust
import Testing

@testable import GooglePlaySimulator

struct PlayLifecycleTests {
    static let package = "com.example.app"
    static let start = Timestamp(millisecondsSince1970: 1_714_557_600_000)
    static let day: Int64 = 86_400_000

    static func simulator(_ clock: ManualClock) throws -> PlaySimulator {
        try PlaySimulator(
            packageNames: [package], clock: clock,
            push: .init(url: nil, audience: "https://storekeeper.test/push"), transport: nil)
    }

    /// The notification types pushed so far, in order, as (kind, number).
    static func pushed(_ simulator: PlaySimulator) async -> [String] {
        await simulator.pushes.map { push in
            let n = push.notification
            if let s = n.subscriptionNotification { return "sub:\(s.notificationType.rawValue)" }
            if let o = n.oneTimeProductNotification { return "otp:\(o.notificationType.rawValue)" }
            if let v = n.voidedPurchaseNotification {
                return "void:\(v.productType.rawValue)/\(v.refundType.rawValue)"
            }
            return "test"
        }
    }

    @Test func subscriptionLifecycleHasGooglesStatesAndNotifications() async throws {
        let clock = ManualClock(Self.start)
        let play = try Self.simulator(clock)
        let token = try await play.purchaseSubscription(
            packageName: Self.package, productId: "premium", obfuscatedAccountId: "acct-1")
        var state = try await play.subscriptionV2(packageName: Self.package, token: token)
        #expect(state.subscriptionState == .active)
        #expect(state.acknowledgementState == .pending)
        #expect(state.lineItems?.first?.expiryTime?.milliseconds == Self.start.millisecondsSince1970 + 30 * Self.day)
        #expect(state.lineItems?.first?.autoRenewingPlan?.autoRenewEnabled == true)
        #expect(state.externalAccountIdentifiers?.obfuscatedExternalAccountId == "acct-1")
        try await play.acknowledgeSubscription(packageName: Self.package, subscriptionId: "premium", token: token)
        #expect(
            try await play.subscriptionV2(packageName: Self.package, token: token).acknowledgementState == .acknowledged
        )

        clock.advance(milliseconds: 30 * Self.day)
        await play.tick()  // auto-renewal
        state = try await play.subscriptionV2(packageName: Self.package, token: token)
        #expect(state.subscriptionState == .active)
        #expect(state.lineItems?.first?.expiryTime?.milliseconds == Self.start.millisecondsSince1970 + 60 * Self.day)
        #expect(state.lineItems?.first?.latestSuccessfulOrderId == "GPA.3300-0000-0000-00001..0")

        try await play.enterGracePeriod(token)
        state = try await play.subscriptionV2(packageName: Self.package, token: token)
        #expect(state.subscriptionState == .inGracePeriod)
        #expect(state.inGracePeriodStateContext?.renewalDeclined?.pendingOrderId == "GPA.3300-0000-0000-00001..1")
        clock.advance(milliseconds: 3 * Self.day)
        await play.tick()  // grace over: hold
        state = try await play.subscriptionV2(packageName: Self.package, token: token)
        #expect(state.subscriptionState == .onHold)
        #expect(state.lineItems?.first?.expiryTime?.milliseconds == clock.now.millisecondsSince1970)
        try await play.recover(token)
        #expect(try await play.subscriptionV2(packageName: Self.package, token: token).subscriptionState == .active)

        try await play.pause(token, resumeAtMillis: clock.now.millisecondsSince1970 + 10 * Self.day)
        state = try await play.subscriptionV2(packageName: Self.package, token: token)
        #expect(state.subscriptionState == .paused)
        #expect(
            state.pausedStateContext?.autoResumeTime?.milliseconds == clock.now.millisecondsSince1970 + 10 * Self.day)
        clock.advance(milliseconds: 10 * Self.day)
        await play.tick()  // automatic resume
        #expect(try await play.subscriptionV2(packageName: Self.package, token: token).subscriptionState == .active)

        try await play.cancel(token)
        state = try await play.subscriptionV2(packageName: Self.package, token: token)
        #expect(state.subscriptionState == .canceled)
        #expect(state.lineItems?.first?.autoRenewingPlan?.autoRenewEnabled == false)
        #expect(
            state.canceledStateContext?.userInitiatedCancellation?.cancelTime?.milliseconds
                == clock.now.millisecondsSince1970)
        try await play.restart(token)
        #expect(try await play.subscriptionV2(packageName: Self.package, token: token).subscriptionState == .active)
        try await play.cancel(token)
        clock.advance(milliseconds: 31 * Self.day)
        await play.tick()  // the canceled period ends
        state = try await play.subscriptionV2(packageName: Self.package, token: token)
        #expect(state.subscriptionState == .expired)

        #expect(
            await Self.pushed(play) == [
                "sub:4", "sub:2", "sub:6", "sub:5", "sub:1", "sub:10", "sub:2", "sub:3", "sub:7", "sub:3", "sub:13",
            ])
        await #expect(throws: PlaySimulatorError.invalidState) { try await play.renew(token) }
    }

    @Test func revokeUpgradeAndVoidedSubscription() async throws {
        let clock = ManualClock(Self.start)
        let play = try Self.simulator(clock)
        let basic = try await play.purchaseSubscription(packageName: Self.package, productId: "basic")
        let premium = try await play.changePlan(basic, toProductId: "premium")
        let old = try await play.subscriptionV2(packageName: Self.package, token: basic)
        #expect(old.subscriptionState == .expired)
        #expect(old.canceledStateContext?.replacementCancellation == ReplacementCancellation())
        let new = try await play.subscriptionV2(packageName: Self.package, token: premium)
        #expect(new.linkedPurchaseToken == basic)
        #expect(new.lineItems?.first?.productId == "premium")

        try await play.revoke(premium)
        let revoked = try await play.subscriptionV2(packageName: Self.package, token: premium)
        #expect(revoked.subscriptionState == .expired)
        #expect(revoked.canceledStateContext?.developerInitiatedCancellation == DeveloperInitiatedCancellation())

        let third = try await play.purchaseSubscription(packageName: Self.package, productId: "premium")
        clock.advance(milliseconds: 1000)
        try await play.voidSubscription(third, reason: .chargeback, source: .user)
        #expect(try await play.subscriptionV2(packageName: Self.package, token: third).subscriptionState == .expired)
        let onlyProducts = try await play.voidedPurchases(
            packageName: Self.package, startTime: nil, endTime: nil, maxResults: nil, type: nil, includePartial: false,
            pageToken: nil)
        #expect(onlyProducts.voidedPurchases == [])
        let all = try await play.voidedPurchases(
            packageName: Self.package, startTime: nil, endTime: nil, maxResults: nil, type: 1, includePartial: false,
            pageToken: nil)
        #expect(all.voidedPurchases?.map(\.purchaseToken) == [third])
        #expect(all.voidedPurchases?.first?.voidedReason == .chargeback)
        #expect(all.voidedPurchases?.first?.voidedTimeMillis?.milliseconds == Self.start.millisecondsSince1970 + 1000)
        #expect(await Self.pushed(play) == ["sub:4", "sub:4", "sub:12", "sub:4", "void:1/1"])
    }

    @Test func oneTimeProductsFullAndPartialRefundsAndPaging() async throws {
        let clock = ManualClock(Self.start)
        let play = try Self.simulator(clock)
        let coins = try await play.purchaseProduct(packageName: Self.package, productId: "coins", quantity: 5)
        try await play.acknowledgeProduct(packageName: Self.package, productId: "coins", token: coins)
        try await play.voidProduct(coins, quantity: 2)
        var purchase = try await play.product(packageName: Self.package, productId: "coins", token: coins)
        // A license tester's purchase, as the simulator's subscriptions are (the Sandbox).
        #expect(purchase.purchaseType == .test)
        #expect(purchase.refundableQuantity == 3)
        #expect(purchase.purchaseState == .purchased)
        #expect(purchase.acknowledgementState == .acknowledged)
        try await play.voidProduct(coins)
        purchase = try await play.product(packageName: Self.package, productId: "coins", token: coins)
        #expect(purchase.refundableQuantity == 0)
        #expect(purchase.purchaseState == .canceled)

        let gem = try await play.purchaseProduct(packageName: Self.package, productId: "gem")
        try await play.consumeProduct(packageName: Self.package, productId: "gem", token: gem)
        #expect(
            try await play.product(packageName: Self.package, productId: "gem", token: gem).consumptionState
                == .consumed)
        await #expect(throws: PlaySimulatorError.invalidState) {
            try await play.consumeProduct(packageName: Self.package, productId: "gem", token: gem)
        }
        await #expect(throws: PlaySimulatorError.productMismatch) {
            try await play.product(packageName: Self.package, productId: "coins", token: gem)
        }
        await #expect(throws: PlaySimulatorError.purchaseNotFound) {
            try await play.product(packageName: Self.package, productId: "gem", token: "nope")
        }
        await #expect(throws: PlaySimulatorError.applicationNotFound) {
            try await play.product(packageName: "com.other", productId: "gem", token: gem)
        }

        let withoutPartial = try await play.voidedPurchases(
            packageName: Self.package, startTime: nil, endTime: nil, maxResults: nil, type: 0, includePartial: false,
            pageToken: nil)
        #expect(withoutPartial.voidedPurchases?.map(\.voidedQuantity) == [nil])
        let first = try await play.voidedPurchases(
            packageName: Self.package, startTime: nil, endTime: nil, maxResults: 1, type: 0, includePartial: true,
            pageToken: nil)
        #expect(first.voidedPurchases?.map(\.voidedQuantity) == [2])
        #expect(first.tokenPagination?.nextPageToken == "sim-page-1")
        let second = try await play.voidedPurchases(
            packageName: Self.package, startTime: nil, endTime: nil, maxResults: 1, type: 0, includePartial: true,
            pageToken: "sim-page-1")
        #expect(second.voidedPurchases?.map(\.voidedQuantity) == [nil])
        #expect(second.tokenPagination == nil)
        #expect(await Self.pushed(play) == ["otp:1", "void:2/2", "void:2/1", "otp:1"])
    }

    @Test func unacknowledgedPurchasesAreRefundedAfterThreeDays() async throws {
        let clock = ManualClock(Self.start)
        let play = try Self.simulator(clock)
        let unacknowledged = try await play.purchaseSubscription(packageName: Self.package, productId: "premium")
        let acknowledged = try await play.purchaseSubscription(packageName: Self.package, productId: "premium")
        try await play.acknowledgeSubscription(
            packageName: Self.package, subscriptionId: "premium", token: acknowledged)
        let product = try await play.purchaseProduct(packageName: Self.package, productId: "coins")

        clock.advance(milliseconds: 3 * Self.day - 1)
        await play.tick()
        #expect(await play.pushes.count == 3)
        clock.advance(milliseconds: 1)
        await play.tick()
        #expect(
            try await play.subscriptionV2(packageName: Self.package, token: unacknowledged).subscriptionState
                == .expired)
        #expect(
            try await play.subscriptionV2(packageName: Self.package, token: acknowledged).subscriptionState == .active)
        #expect(
            try await play.product(packageName: Self.package, productId: "coins", token: product).purchaseState
                == .canceled)
        let voided = try await play.voidedPurchases(
            packageName: Self.package, startTime: nil, endTime: nil, maxResults: nil, type: 1, includePartial: true,
            pageToken: nil)
        #expect(voided.voidedPurchases?.map(\.purchaseToken) == [unacknowledged, product])
        #expect(
            voided.voidedPurchases?.map(\.voidedReason) == [
                PlayRawEnum(.unacknowledgedPurchase), PlayRawEnum(.unacknowledgedPurchase),
            ])
        #expect(voided.voidedPurchases?.map(\.voidedSource) == [PlayRawEnum(.google), PlayRawEnum(.google)])
        #expect(await Self.pushed(play) == ["sub:4", "sub:4", "otp:1", "void:1/1", "void:2/1"])
    }

    @Test func pushesCarryAVerifiableOIDCTokenAndRotationIsPublished() async throws {
        let clock = ManualClock(Self.start)
        let play = try Self.simulator(clock)
        try await play.purchaseSubscription(packageName: Self.package, productId: "premium")
        let firstSet = try GoogleKeySet(json: await play.keySetJSON())
        #expect(Array(firstSet.keys.keys) == ["sim-key-1"])
        try await play.rotateSigningKey()
        try await play.purchaseSubscription(packageName: Self.package, productId: "premium")
        let rotatedSet = try GoogleKeySet(json: await play.keySetJSON())
        #expect(Set(rotatedSet.keys.keys) == ["sim-key-1", "sim-key-2"])

        let pushes = await play.pushes
        #expect(pushes[0].request.subscription == "projects/simulator/subscriptions/play-rtdn")
        #expect(try pushes[0].request.developerNotification() == pushes[0].notification)
        let loader = FixedKeySet(json: await play.keySetJSON())
        let verifier = PushAuthenticationVerifier(
            audience: "https://storekeeper.test/push",
            serviceAccountEmail: "play-push@simulator.iam.gserviceaccount.com",
            keys: GoogleKeySetCache(loader: loader))
        let first = try await verifier.verify(authorization: pushes[0].authorization, now: Self.start.date)
        #expect(first.kid == "sim-key-1")
        let second = try await verifier.verify(authorization: pushes[1].authorization, now: Self.start.date)
        #expect(second.kid == "sim-key-2")
    }

    @Test func tokenEndpointAcceptsOnlyItsServiceAccountsAssertions() async throws {
        let clock = ManualClock(Self.start)
        let play = try Self.simulator(clock)
        let tokenURI = URL(string: "http://127.0.0.1:1/token")!
        let account = try await play.createServiceAccount(email: "sa@sim.iam.gserviceaccount.com", tokenURI: tokenURI)
        let assertion = try ServiceAccountAssertion.sign(key: account, now: Self.start.date)
        let grant = "urn:ietf:params:oauth:grant-type:jwt-bearer"
        guard case .success(let token) = await play.exchange(grantType: grant, assertion: assertion) else {
            Issue.record("a valid assertion was refused")
            return
        }
        #expect(token.expiresIn == 3599)
        try await play.authenticate(authorization: "Bearer " + token.accessToken)
        await #expect(throws: PlaySimulatorError.missingCredentials) { try await play.authenticate(authorization: nil) }
        await #expect(throws: PlaySimulatorError.invalidCredentials) {
            try await play.authenticate(authorization: "Bearer ya29.forged")
        }

        #expect(
            await play.exchange(grantType: "password", assertion: assertion)
                == .failure(
                    OAuthErrorResponse(
                        error: "unsupported_grant_type", errorDescription: "Invalid grant_type: password")))
        let stranger = ServiceAccountKey(
            clientEmail: "sa@sim.iam.gserviceaccount.com", privateKeyId: account.privateKeyId,
            privateKey: try RSAPrivateKey.generate(), tokenURI: tokenURI)
        let strangerAssertion = try ServiceAccountAssertion.sign(key: stranger, now: Self.start.date)
        #expect(
            await play.exchange(grantType: grant, assertion: strangerAssertion)
                == .failure(OAuthErrorResponse(error: "invalid_grant", errorDescription: "Invalid JWT Signature.")))
        // google-auth always names Google's canonical token URI as the audience: accepted too.
        let canonical = ServiceAccountKey(
            clientEmail: account.clientEmail, privateKeyId: account.privateKeyId, privateKey: account.privateKey)
        let canonicalAssertion = try ServiceAccountAssertion.sign(key: canonical, now: Self.start.date)
        guard case .success = await play.exchange(grantType: grant, assertion: canonicalAssertion) else {
            Issue.record("an assertion for https://oauth2.googleapis.com/token was refused")
            return
        }
        let elsewhere = ServiceAccountKey(
            clientEmail: account.clientEmail, privateKeyId: account.privateKeyId, privateKey: account.privateKey,
            tokenURI: URL(string: "https://elsewhere.test/token")!)
        let elsewhereAssertion = try ServiceAccountAssertion.sign(key: elsewhere, now: Self.start.date)
        #expect(
            await play.exchange(grantType: grant, assertion: elsewhereAssertion)
                == .failure(OAuthErrorResponse(error: "invalid_grant", errorDescription: "Invalid JWT audience.")))
        let stale = try ServiceAccountAssertion.sign(key: account, now: Self.start.date.addingTimeInterval(-7200))
        guard case .failure(let staleError) = await play.exchange(grantType: grant, assertion: stale) else {
            Issue.record("an expired assertion was accepted")
            return
        }
        #expect(staleError.error == "invalid_grant")
        let wrongScope = try ServiceAccountAssertion.sign(
            key: account, scope: "https://www.googleapis.com/auth/cloud-platform", now: Self.start.date)
        #expect(
            await play.exchange(grantType: grant, assertion: wrongScope)
                == .failure(OAuthErrorResponse(error: "invalid_scope", errorDescription: "Invalid OAuth scope.")))
        // Access tokens last an hour.
        clock.advance(milliseconds: 3_600_000)
        await #expect(throws: PlaySimulatorError.invalidCredentials) {
            try await play.authenticate(authorization: "Bearer " + token.accessToken)
        }
    }
}

/// A key set held in memory.
struct FixedKeySet: GoogleKeySetLoader {
    let json: Data
    var origin: String { "simulator" }
    func loadKeySet() async throws(GooglePlayTrustError) -> Data { json }
}
