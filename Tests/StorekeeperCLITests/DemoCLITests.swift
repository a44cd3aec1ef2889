import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// Issue 15: `storekeeper serve --demo` (what `make run` starts) runs the Play simulator beside
/// the App Store simulator: its banner names it, every third customer is an Android one whose
/// purchase reaches Storekeeper through Google Play (`user-0003` subscribes monthly, `user-0006`
/// buys the lifetime unlock), no journey step fails, and the
/// analytics API shows Google Play figures apart, adding up with the App Store's to the
/// combined ones. Ctrl-C stops it cleanly.
struct DemoCLITests {
    static func get(_ url: String, key: String) async throws -> (status: Int, json: [String: Any]) {
        var request = URLRequest(url: URL(string: url)!)
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        request.timeoutInterval = 10
        let (data, response) = try await URLSession.shared.data(for: request)
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, json)
    }

    /// Gross revenue per currency of one store (or both) since the demo started, summed over
    /// the days.
    static func gross(_ base: String, key: String, store: String?) async throws -> [String: Int] {
        let filter = store.map { "&store=\($0)" } ?? ""
        let answer = try await get(base + "/v1/apps/demo/analytics/revenue?environment=Sandbox\(filter)", key: key)
        var result: [String: Int] = [:]
        for point in answer.json["points"] as? [[String: Any]] ?? [] {
            for entry in point["byCurrency"] as? [[String: Any]] ?? [] {
                guard let currency = entry["currency"] as? String, let gross = entry["gross"] as? Int else { continue }
                result[currency, default: 0] += gross
            }
        }
        return result
    }

    @Test func demoHasAndroidCustomersOnGooglePlay() async throws {
        let directory = try CLITests().temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let child = try ChildProcess(
            ["serve", "--demo", "--listen", "127.0.0.1:0", "--month-seconds", "600"], in: directory,
            environment: ["STOREKEEPER_DATA_DIRECTORY": directory.appendingPathComponent("data").path])
        defer { if child.process.isRunning { child.signal(SIGKILL) } }
        let started = ContinuousClock.now
        while !child.stdout.contains("Progress every"), child.process.isRunning,
            ContinuousClock.now < started + .seconds(90)
        {
            try await Task.sleep(for: .milliseconds(50))
        }
        let banner = child.stdout
        let base = try #require(banner.firstMatch(of: /running at (http:\/\/127\.0\.0\.1:\d+)/)?.1, "\(banner)")
        let publicKey = try #require(banner.firstMatch(of: /public\s+(sk_pub_\S+)/)?.1)
        let secretKey = try #require(banner.firstMatch(of: /secret\s+(sk_sec_\S+)/)?.1)
        #expect(banner.contains("Google Play the Play simulator at http://127.0.0.1:"))
        #expect(banner.contains("every third one (user-0003, user-0006, …)"))

        // user-0003 arrives after two arrival intervals and subscribes on Google Play.
        var entitlement: [String: Any] = [:]
        while ContinuousClock.now < started + .seconds(120) {
            let answer = try await Self.get("\(base)/v1/apps/demo/customers/user-0003", key: String(publicKey))
            entitlement = (answer.json["entitlements"] as? [String: Any])?["pro"] as? [String: Any] ?? [:]
            if entitlement["isActive"] as? Bool == true { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        #expect(entitlement["store"] as? String == "play_store", "\(entitlement)")
        #expect(entitlement["isActive"] as? Bool == true)
        #expect((entitlement["productId"] as? String)?.hasSuffix(".monthly") == true)

        // user-0006 buys the lifetime unlock on Google Play (a one-time purchase, Sandbox as the
        // simulator's subscriptions are).
        var lifetime: [String: Any] = [:]
        while ContinuousClock.now < started + .seconds(150) {
            let answer = try await Self.get("\(base)/v1/apps/demo/customers/user-0006", key: String(publicKey))
            lifetime = (answer.json["entitlements"] as? [String: Any])?["lifetime"] as? [String: Any] ?? [:]
            if lifetime["isActive"] as? Bool == true { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        #expect(lifetime["store"] as? String == "play_store", "\(lifetime)")
        #expect(lifetime["environment"] as? String == "Sandbox")

        // Google Play's revenue is its own series; with the App Store's it makes the total. The
        // demo goes on buying meanwhile: read the three again until none moved in between.
        var consistent = false
        for _ in 0..<10 where !consistent {
            let all = try await Self.gross(base.description, key: String(secretKey), store: nil)
            let appStore = try await Self.gross(base.description, key: String(secretKey), store: "appStore")
            let play = try await Self.gross(base.description, key: String(secretKey), store: "googlePlay")
            let again = try await Self.gross(base.description, key: String(secretKey), store: nil)
            guard all == again else { continue }
            consistent = true
            // At least user-0003's month at USD 5.99 (the catalog's reference price).
            #expect((play["USD"] ?? 0) >= 5990, "\(play)")
            #expect(all == appStore.merging(play) { $0 + $1 }, "\(all) \(appStore) \(play)")
        }
        #expect(consistent)

        child.signal(SIGINT)
        #expect(try await child.exit(timeout: .seconds(60)) == (0, false), "\(child.stdout)\(child.stderr)")
        #expect(child.stdout.contains("stopped"))
        #expect(!child.stdout.contains("journey steps failed"), "\(child.stdout)")
    }
}
