import Foundation
import Storage

/// The demo's progress line, printed every `interval`: how many customers arrived, how many
/// notifications Storekeeper ingested, how many customers may use an entitlement right now
/// (asked through the public API, as their apps would), and how many webhooks were delivered.
/// - Note: Immutable value; `Sendable`.
struct DemoProgress: Sendable {
    let store: any Store
    let client: DemoHTTPClient
    let publicKey: String
    let registry: DemoRegistry
    let webhooks: DemoWebhookCounter
    let interval: Duration

    /// Prints until the task is cancelled.
    func run() async {
        let started = ContinuousClock.now
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            if Task.isCancelled { return }
            let line = await summary(elapsed: ContinuousClock.now - started)
            DemoCommand.say(line)
        }
    }

    func summary(elapsed: Duration) async -> String {
        let customers = registry.customers
        let notifications =
            (try? await store.read { reader in try reader.notificationCount(appId: DemoAppSetup.appId) })
        var active: [String: Int] = [:]
        var activeCustomers = 0
        for customer in customers where registry.hasPosted(customer) {
            guard
                let answer = try? await client.send(
                    "GET", "/v1/apps/\(DemoAppSetup.appId)/customers/\(customer)", key: publicKey),
                answer.status == 200, let entitlements = answer.json["entitlements"] as? [String: Any]
            else { continue }
            let ids = entitlements.compactMap { id, value in
                ((value as? [String: Any])?["isActive"] as? Bool) == true ? id : nil
            }
            if !ids.isEmpty { activeCustomers += 1 }
            for id in ids { active[id, default: 0] += 1 }
        }
        let seconds = Int(elapsed.components.seconds)
        let byEntitlement = active.keys.sorted().map { "\($0) \(active[$0]!)" }.joined(separator: ", ")
        var line =
            String(format: "[%3d:%02d] ", seconds / 60, seconds % 60)
            + "\(customers.count) customers · \(notifications.map(String.init) ?? "?") notifications ingested · "
            + "\(activeCustomers) with an active entitlement" + (byEntitlement.isEmpty ? "" : " (\(byEntitlement))")
            + " · \(webhooks.delivered) webhooks delivered"
        let failures = registry.failures
        if failures.count > 0 {
            line += " · \(failures.count) journey steps failed, last: \(failures.last ?? "")"
        }
        return line
    }
}
