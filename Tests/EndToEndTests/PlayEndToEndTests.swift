import AppStoreModels
import AppStoreSimulator
import Foundation
import GooglePlayModels
import GooglePlaySimulator
import GooglePlayTrust
import Storage
import StorekeeperTesting
import Testing

/// Issue 15: Google Play purchases through a running server, against the Play simulator in
/// process on the App Store end-to-end harness (same clock): Pub/Sub pushes authenticated by
/// their OIDC token, states read from the simulator's Play Developer API, the app posting
/// purchase tokens, acknowledgement jobs, and one customer holding both stores' purchases.
@Suite(.serialized) struct PlayEndToEndTests {
    static let day: Int64 = 86_400_000
    static let package = EndToEndHarness.playPackage

    /// A harness with the shared catalog's app, its Play side configured (acknowledging
    /// purchases unless told not to), and `body` run on it.
    static func run(acknowledgePurchases: Bool = true, _ body: (EndToEndHarness) async throws -> Void) async throws {
        let harness = try await EndToEndHarness(database: .sqlite)
        do {
            try await harness.configure(try EndToEndScenario.load("new-subscription-renewals.json"))
            try await harness.configurePlay(acknowledgePurchases: acknowledgePurchases)
            try await body(harness)
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }

    static func customer(_ harness: EndToEndHarness, _ id: String) async throws -> [String: Any] {
        try harness.expect(
            200, await harness.request("GET", "/v1/apps/\(harness.appId)/customers/\(id)", key: harness.publicKey)
        ).json
    }

    static func post(
        _ harness: EndToEndHarness, _ customer: String, token: String, productId: String,
        type: String = "subscription"
    ) async throws -> HTTPAnswer {
        try await harness.request(
            "POST", "/v1/apps/\(harness.appId)/customers/\(customer)/purchases/googleplay", key: harness.publicKey,
            json: ["packageName": package, "productId": productId, "purchaseToken": token, "type": type])
    }

    static func events(_ harness: EndToEndHarness, _ customer: String) async throws -> [String] {
        let answer = try harness.expect(
            200,
            await harness.request(
                "GET", "/v1/apps/\(harness.appId)/customers/\(customer)/events?limit=500", key: harness.secretKey))
        return (answer.json["events"] as? [[String: Any]] ?? []).compactMap {
            ($0["event"] as? [String: Any])?["type"] as? String
        }
    }

    static func entitlement(_ info: [String: Any], _ id: String) -> [String: Any] {
        (info["entitlements"] as? [String: Any])?[id] as? [String: Any] ?? [:]
    }

    /// One App Store simulator action, as a scenario step writes it.
    static func appStore(_ harness: EndToEndHarness, _ json: String) async throws {
        _ = try await harness.simulator.perform(try AppStoreJSON.decode(SimulatorAction.self, from: Data(json.utf8)))
    }

    /// The status each push got from Storekeeper, in order.
    static func pushStatuses(_ harness: EndToEndHarness) async -> [Int?] {
        await harness.play.pushes.map(\.status)
    }

    static func storedNotifications(_ harness: EndToEndHarness) async throws -> Int {
        let pushes = await harness.play.pushes
        let appId = harness.appId
        return try await harness.store.read { reader in
            try pushes.filter {
                try reader.playNotification(appId: appId, messageId: $0.request.message.messageId) != nil
            }
            .count
        }
    }

    @Test func purchaseRenewCancelAndExpire() async throws {
        try await Self.run { harness in
            let start = harness.clock.now.millisecondsSince1970
            let token = try await harness.play.purchaseSubscription(
                packageName: Self.package, productId: "monthly", obfuscatedAccountId: "alice-account")
            // The push of the purchase is stored (nobody owns the token yet) and acknowledged.
            #expect(await Self.pushStatuses(harness) == [200])
            #expect(try await Self.storedNotifications(harness) == 1)

            let posted = try harness.expect(200, await Self.post(harness, "alice", token: token, productId: "monthly"))
            let order = try #require(await harness.play.subscription(token)?.orderId)
            let end = start + 30 * Self.day
            let until = Timestamp(millisecondsSince1970: end).description.replacingOccurrences(of: ".000Z", with: "Z")
            #expect(
                Self.entitlement(posted.json, "pro") as NSDictionary == [
                    "entitlementId": "pro", "environment": "Sandbox", "expiresDate": end, "isActive": true,
                    "originalPurchaseDate": start, "originalTransactionId": token, "ownership": "PURCHASED",
                    "periodType": "NORMAL", "productId": "monthly", "purchaseDate": start,
                    "reason": "active: granted by monthly, active until \(until); renews", "store": "play_store",
                    "transactionId": order, "willRenew": true,
                ])
            #expect(
                (posted.json["subscriptions"] as? [String: Any])?["monthly"] as? NSDictionary == [
                    "autoRenewProductId": "monthly", "environment": "Sandbox", "expiresDate": end, "isActive": true,
                    "originalPurchaseDate": start, "originalTransactionId": token, "ownership": "PURCHASED",
                    "periodType": "NORMAL", "productId": "monthly", "purchaseDate": start,
                    "reason": "active until \(until); renews", "status": "ACTIVE", "store": "play_store",
                    "subscriptionGroup": "G1", "transactionId": order, "willRenew": true,
                ])
            #expect(posted.json["eventIds"] as? [String] == ["INITIAL_PURCHASE/\(order)/monthly"])

            // The acknowledgement job acknowledges the purchase with Google.
            #expect(await harness.play.subscription(token)?.acknowledged == false)
            _ = await harness.application.jobWorker.runDue()
            #expect(await harness.play.subscription(token)?.acknowledged == true)

            // A renewal one period later: the push is read and extends access.
            harness.clock.advance(milliseconds: 30 * Self.day)
            try await harness.play.renew(token)
            var info = try await Self.customer(harness, "alice")
            #expect((Self.entitlement(info, "pro")["expiresDate"] as? NSNumber)?.int64Value == start + 60 * Self.day)

            // Canceled: access to the end of the period, renewal off.
            harness.clock.advance(milliseconds: 5 * Self.day)
            try await harness.play.cancel(token)
            info = try await Self.customer(harness, "alice")
            #expect(Self.entitlement(info, "pro")["isActive"] as? Bool == true)
            #expect(Self.entitlement(info, "pro")["willRenew"] as? Bool == false)

            // Expired at the end of the period.
            harness.clock.advance(milliseconds: 26 * Self.day)
            try await harness.play.expire(token)
            info = try await Self.customer(harness, "alice")
            #expect(Self.entitlement(info, "pro")["isActive"] as? Bool == false)
            #expect(await Self.pushStatuses(harness) == [200, 200, 200, 200])
            #expect(
                try await Self.events(harness, "alice") == [
                    "INITIAL_PURCHASE", "RENEWAL", "CANCELLATION", "EXPIRATION",
                ])
        }
    }

    @Test func voidedPurchaseEndsAccess() async throws {
        try await Self.run { harness in
            let token = try await harness.play.purchaseSubscription(packageName: Self.package, productId: "monthly")
            try harness.expect(200, await Self.post(harness, "bob", token: token, productId: "monthly"))
            harness.clock.advance(milliseconds: 2 * Self.day)
            try await harness.play.voidSubscription(token, reason: .remorse)
            #expect(await Self.pushStatuses(harness) == [200, 200])
            let info = try await Self.customer(harness, "bob")
            #expect(Self.entitlement(info, "pro")["isActive"] as? Bool == false)
            #expect(try await Self.events(harness, "bob") == ["INITIAL_PURCHASE", "REFUND"])
        }
    }

    @Test func upgradeMovesAccessToTheLinkedToken() async throws {
        try await Self.run { harness in
            let monthly = try await harness.play.purchaseSubscription(
                packageName: Self.package, productId: "monthly", obfuscatedAccountId: "carol-account")
            try harness.expect(200, await Self.post(harness, "carol", token: monthly, productId: "monthly"))
            harness.clock.advance(milliseconds: 3 * Self.day)
            // The new token names the old one: its push goes to the old token's owner, with no post.
            let yearly = try await harness.play.changePlan(monthly, toProductId: "yearly")
            #expect(await Self.pushStatuses(harness) == [200, 200])
            #expect(await harness.play.subscription(yearly)?.linkedPurchaseToken == monthly)
            let info = try await Self.customer(harness, "carol")
            let pro = Self.entitlement(info, "pro")
            #expect(pro["isActive"] as? Bool == true)
            #expect(pro["productId"] as? String == "yearly")
            #expect(pro["originalTransactionId"] as? String == yearly)
            #expect(pro["store"] as? String == "play_store")
            #expect(try await Self.events(harness, "carol") == ["INITIAL_PURCHASE", "PRODUCT_CHANGE"])
        }
    }

    @Test func refusedPushesAre401CountedAndStoreNothing() async throws {
        try await Self.run { harness in
            let path = harness.playNotificationPath
            let notification = DeveloperNotification(
                packageName: Self.package, eventTimeMillis: EpochMillisString(milliseconds: 1),
                testNotification: TestNotification())
            let body = try JSONSerialization.jsonObject(
                with: GooglePlayJSON.encode(
                    PubSubPushRequest(
                        message: PubSubMessage(bytes: GooglePlayJSON.encode(notification), messageId: "refused-1"))))

            // No token.
            var answer = try await harness.request("POST", path, json: body)
            #expect(answer.status == 401)
            #expect((answer.json["error"] as? [String: Any])?["code"] as? String == "push_unauthenticated")

            // alg none, with the simulator's claims and kid.
            let signed = try await harness.play.pushToken()
            let parts = signed.split(separator: ".")
            let none = Base64URLText.encode(Data(#"{"alg":"none","typ":"JWT","kid":"sim-key-1"}"#.utf8))
            answer = try await harness.request("POST", path, key: none + "." + parts[1] + ".", json: body)
            #expect(answer.status == 401)

            // A valid token for another audience: the app now expects a different one.
            try harness.expect(
                200,
                await harness.request(
                    "PUT", "/v1/admin/apps/\(harness.appId)/googleplay", key: EndToEndHarness.adminKey,
                    json: ["rtdnAudience": "https://elsewhere.example/push"]))
            answer = try await harness.request("POST", path, key: signed, json: body)
            #expect(answer.status == 401)

            let stored = try await harness.store.read {
                try $0.playNotification(appId: harness.appId, messageId: "refused-1")
            }
            #expect(stored == nil)
            let metrics = try await HTTPAnswer.send("GET", harness.server.baseURL.absoluteString + "/metrics").text
            #expect(metrics.contains(#"storekeeper_play_push_refusals_total{rule="push.tokenMissing"} 1"#))
            #expect(metrics.contains(#"storekeeper_play_push_refusals_total{rule="alg.none"} 1"#))
            #expect(metrics.contains(#"storekeeper_play_push_refusals_total{rule="claim.audience"} 1"#))

            // With the right audience again the same message is accepted, once.
            try harness.expect(
                200,
                await harness.request(
                    "PUT", "/v1/admin/apps/\(harness.appId)/googleplay", key: EndToEndHarness.adminKey,
                    json: ["rtdnAudience": EndToEndHarness.playAudience]))
            answer = try await harness.request("POST", path, key: signed, json: body)
            #expect(answer.status == 200)
            #expect(answer.json as NSDictionary == ["outcome": "recorded", "kind": "test"])
            answer = try await harness.request("POST", path, key: signed, json: body)
            #expect(answer.json as NSDictionary == ["outcome": "duplicate", "kind": "test"])
        }
    }

    @Test func bothStoresGrantUntilBothEnd() async throws {
        try await Self.run { harness in
            // The App Store side: alice subscribes to monthly and the app posts what StoreKit gave it.
            try await Self.appStore(
                harness,
                #"{"action": "purchase", "customer": "alice", "productId": "monthly", "introductoryOffer": false}"#)
            let signed = try #require(try await harness.simulator.signedTransactions(customer: "alice").last)
            try harness.expect(
                200,
                await harness.request(
                    "POST", "/v1/apps/\(harness.appId)/customers/alice/transactions", key: harness.publicKey,
                    json: ["signedTransaction": signed]))
            #expect(Self.entitlement(try await Self.customer(harness, "alice"), "pro")["store"] == nil)

            // The Play side: a 60-day subscription to the same entitlement.
            let start = harness.clock.now.millisecondsSince1970
            let token = try await harness.play.purchaseSubscription(
                packageName: Self.package, productId: "monthly", periodMillis: 60 * Self.day)
            let posted = try harness.expect(200, await Self.post(harness, "alice", token: token, productId: "monthly"))
            // The grant lasting longest shows: Play's.
            #expect(Self.entitlement(posted.json, "pro")["store"] as? String == "play_store")

            // The App Store subscription ends; Play still grants.
            try await Self.appStore(
                harness, #"{"action": "setAutoRenew", "customer": "alice", "productId": "monthly", "enabled": false}"#)
            try await Self.appStore(harness, #"{"action": "renew", "customer": "alice", "productId": "monthly"}"#)
            #expect(
                await harness.simulator.subscriptionStatus(customer: "alice", productId: "monthly").map(
                    EndToEndRunner.name)
                    == "expired")
            var info = try await Self.customer(harness, "alice")
            #expect(Self.entitlement(info, "pro")["isActive"] as? Bool == true)
            #expect(Self.entitlement(info, "pro")["store"] as? String == "play_store")

            // Then Play ends too: no access.
            try await harness.play.cancel(token)
            harness.clock.set(Timestamp(millisecondsSince1970: start + 60 * Self.day + 1000))
            try await harness.play.expire(token)
            info = try await Self.customer(harness, "alice")
            #expect(Self.entitlement(info, "pro")["isActive"] as? Bool == false)
        }
    }

    /// Issue 15: a Play subscription and a Play purchase through the simulator and the server
    /// land in the analytics API under `store=googlePlay` at Google's fee (15 % on the
    /// subscription; 15 % on the product, the first million of the year), apart from the App
    /// Store's (nothing here) and inside the combined figures; a voided purchase is a refund.
    @Test func analyticsCountPlayApartAtGooglesFee() async throws {
        try await Self.run { harness in
            // Google shows no price in a purchase: the catalog's reference prices count.
            _ = try harness.expect(
                200,
                await harness.request(
                    "PUT", "/v1/apps/\(harness.appId)/catalog", key: harness.secretKey,
                    json: [
                        "products": [
                            [
                                "productId": "monthly", "kind": "AUTO_RENEWABLE", "subscriptionGroup": "G1",
                                "groupLevel": 1, "duration": "P1M", "entitlementIds": ["pro"],
                                "referencePrice": ["milliunits": 5990, "currency": "USD"],
                            ],
                            [
                                "productId": "coins", "kind": "CONSUMABLE", "entitlementIds": [String](),
                                "referencePrice": ["milliunits": 990, "currency": "USD"],
                            ],
                        ]
                    ]))
            let day = String(harness.clock.now.description.prefix(10))
            let subscription = try await harness.play.purchaseSubscription(
                packageName: Self.package, productId: "monthly", obfuscatedAccountId: "ann-account")
            _ = try harness.expect(200, await Self.post(harness, "ann", token: subscription, productId: "monthly"))
            let coins = try await harness.play.purchaseProduct(
                packageName: Self.package, productId: "coins", quantity: 2)
            _ = try harness.expect(
                200, await Self.post(harness, "ann", token: coins, productId: "coins", type: "product"))
            try await harness.play.voidProduct(coins)

            func series(_ metric: String, _ store: String?) async throws -> [String: Any] {
                let filter = store.map { "&store=\($0)" } ?? ""
                let answer = try harness.expect(
                    200,
                    await harness.request(
                        "GET",
                        "/v1/apps/\(harness.appId)/analytics/\(metric)?environment=Sandbox&from=\(day)&to=\(day)\(filter)",
                        key: harness.secretKey))
                return (answer.json["points"] as? [[String: Any]])?.first ?? [:]
            }
            // 5.99 at 15 %: 5.0915 → 5.092; 2 × 0.99 = 1.98 at 15 %: 1.683, refunded in full.
            let revenue = try await series("revenue", "googlePlay")
            #expect(
                (revenue["byCurrency"] as? [NSDictionary]) == [
                    [
                        "currency": "USD", "gross": 7970, "proceeds": 6775, "refunded": 1980,
                        "refundedProceeds": 1683, "net": 5990, "netProceeds": 5092, "transactions": 2,
                        "refundedOnDate": 1980,
                    ]
                ])
            #expect(NSDictionary(dictionary: try await series("revenue", nil)) == NSDictionary(dictionary: revenue))
            #expect((try await series("revenue", "appStore")["byCurrency"] as? [Any])?.isEmpty == true)
            let refunds = try await series("refunds", "googlePlay")
            #expect(refunds["count"] as? Int == 1)
            #expect(refunds["partial"] as? Int == 0)
            #expect(try await series("new-customers", "googlePlay")["count"] as? Int == 1)
            #expect(try await series("new-customers", "appStore")["count"] as? Int == 0)
            let bad = try await harness.request(
                "GET", "/v1/apps/\(harness.appId)/analytics/revenue?store=playStore", key: harness.secretKey)
            #expect(bad.status == 400)
            #expect(bad.text.contains("store must be appStore or googlePlay"))
        }
    }
}

/// base64url without padding, for hand-made tokens.
enum Base64URLText {
    static func encode(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
