import AppStoreModels
import Foundation
import GooglePlayModels
import GooglePlaySimulator
import GooglePlayTrust
import Storage
import Testing

/// Issue 15, push authentication through the route (`POST /v1/apps/{appId}/notifications/googleplay`):
/// each of the verifier's rules refuses a token with 401 `push_unauthenticated` naming the rule,
/// nothing is stored, and `storekeeper_play_push_refusals_total{rule=…}` counts each exactly; a
/// token with an unknown `kid` is refused until the key set is refetched, and after the
/// simulator rotates its signing key the new key's token is accepted once the refetch is allowed.
@Suite(.serialized) struct PlayPushRefusalEndToEndTests {
    /// The test notification of message `messageId`, as Pub/Sub's push body.
    static func body(messageId: String) throws -> Any {
        let notification = DeveloperNotification(
            packageName: PlayEndToEndTests.package, eventTimeMillis: EpochMillisString(milliseconds: 1),
            testNotification: TestNotification())
        return try JSONSerialization.jsonObject(
            with: GooglePlayJSON.encode(
                PubSubPushRequest(
                    message: PubSubMessage(bytes: GooglePlayJSON.encode(notification), messageId: messageId))))
    }

    /// The refusal counters as `/metrics` shows them, line by line.
    static func refusals(_ harness: EndToEndHarness) async throws -> [String] {
        let metrics = try await HTTPAnswer.send("GET", harness.server.baseURL.absoluteString + "/metrics").text
        return metrics.split(separator: "\n").map(String.init).filter {
            $0.hasPrefix("storekeeper_play_push_refusals_total{")
        }
    }

    @Test func eachRuleIsRefusedCountedAndStoresNothingAndARotationIsFollowed() async throws {
        try await PlayEndToEndTests.run { harness in
            let path = harness.playNotificationPath
            let body = try Self.body(messageId: "refused-1")
            let play = harness.play
            let claims = await play.pushClaims()
            let kid = await play.currentKid
            let rogue = try RSAPrivateKey.generate()

            func refused(_ token: String?, rule: String, _ comment: Comment) async throws {
                let answer = try await harness.request("POST", path, key: token, json: body)
                #expect(answer.status == 401, comment)
                #expect(
                    answer.json["error"] as? NSDictionary == [
                        "code": "push_unauthenticated", "message": "The push request's token was refused (\(rule)).",
                    ], comment)
            }

            try await refused(nil, rule: "push.tokenMissing", "no Authorization header")
            var expired = claims
            (expired.iat, expired.exp) = (claims.iat! - 7200, claims.iat! - 3600)
            try await refused(try await play.pushToken(claims: expired), rule: "claim.expired", "expired an hour ago")
            var audience = claims
            audience.aud = ["https://elsewhere.example/push"]
            try await refused(try await play.pushToken(claims: audience), rule: "claim.audience", "another audience")
            var issuer = claims
            issuer.iss = "https://accounts.example.com"
            try await refused(try await play.pushToken(claims: issuer), rule: "claim.issuer", "another issuer")
            var email = claims
            email.email = "someone-else@simulator.iam.gserviceaccount.com"
            try await refused(try await play.pushToken(claims: email), rule: "claim.email", "another service account")
            // The right claims and the published kid, signed by a key that is not the kid's.
            try await refused(
                try RS256JWTSigner.sign(claims: claims, key: rogue, kid: kid), rule: "signature.invalid",
                "signed by another key")
            let signed = try await play.pushToken()
            let payload = signed.split(separator: ".")[1]
            let none = Base64URLText.encode(Data(#"{"alg":"none","typ":"JWT","kid":"\#(kid)"}"#.utf8))
            try await refused(none + "." + payload + ".", rule: "alg.none", "alg none, no signature")
            // A kid the key set does not hold: refused (the refetch it asks for waits a minute).
            try await refused(
                try RS256JWTSigner.sign(claims: claims, key: rogue, kid: "rogue-kid"), rule: "key.kidUnknown",
                "unknown kid")

            // Google rotates: the new key's token names a kid the cached set lacks. Within the
            // minute since the last fetch it is refused too; a minute later the set is refetched
            // and the same token is accepted, once.
            try await play.rotateSigningKey()
            let rotated = try await play.pushToken()
            #expect(await play.currentKid != kid)
            try await refused(rotated, rule: "key.kidUnknown", "new kid before the refetch is allowed")
            #expect(
                try await harness.store.read { try $0.playNotification(appId: harness.appId, messageId: "refused-1") }
                    == nil)
            #expect(
                try await Self.refusals(harness) == [
                    #"storekeeper_play_push_refusals_total{rule="alg.none"} 1"#,
                    #"storekeeper_play_push_refusals_total{rule="claim.audience"} 1"#,
                    #"storekeeper_play_push_refusals_total{rule="claim.email"} 1"#,
                    #"storekeeper_play_push_refusals_total{rule="claim.expired"} 1"#,
                    #"storekeeper_play_push_refusals_total{rule="claim.issuer"} 1"#,
                    #"storekeeper_play_push_refusals_total{rule="key.kidUnknown"} 2"#,
                    #"storekeeper_play_push_refusals_total{rule="push.tokenMissing"} 1"#,
                    #"storekeeper_play_push_refusals_total{rule="signature.invalid"} 1"#,
                ])

            harness.clock.advance(milliseconds: 61_000)
            var answer = try await harness.request("POST", path, key: rotated, json: body)
            #expect(answer.status == 200)
            #expect(answer.json as NSDictionary == ["outcome": "recorded", "kind": "test"])
            answer = try await harness.request("POST", path, key: rotated, json: body)
            #expect(answer.json as NSDictionary == ["outcome": "duplicate", "kind": "test"])
            #expect(
                try await harness.store.read { try $0.playNotification(appId: harness.appId, messageId: "refused-1") }?
                    .kind == "test")
            // The key published before the rotation still verifies tokens signed with it.
            let second = try Self.body(messageId: "accepted-2")
            answer = try await harness.request("POST", path, key: signed, json: second)
            #expect(answer.status == 200)
            #expect(try await Self.refusals(harness).count == 8)
        }
    }
}
