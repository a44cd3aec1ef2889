import AppStoreModels
import AppStoreSimulator
import AppStoreTrust
import Foundation
import Synchronization

/// Brings a new demo customer to the store every `arrivalInterval` and lets each live through
/// its `DemoJourney` concurrently, until cancelled. Every third customer is an Android one
/// (`DemoAndroidJourney`) when the demo runs the Play simulator.
///
/// A failed step (the simulator refusing an action, Storekeeper answering an error) ends that
/// customer's journey and is counted and shown in the progress line; the stream goes on.
/// - Note: Immutable and `Sendable`; the registry it fills is thread-safe.
struct DemoCustomerStream: Sendable {
    let simulator: AppStoreSimulator
    let client: DemoHTTPClient
    let publicKey: String
    let products: DemoJourney.Products
    let arrivalInterval: Duration
    let registry: DemoRegistry
    var play: DemoPlayStore? = nil

    /// Runs until the task is cancelled.
    func run() async {
        await withTaskGroup(of: Void.self) { group in
            var number = 0
            var appStoreCustomers = 0
            while !Task.isCancelled {
                number += 1
                let customer = String(format: "user-%04d", number)
                if let play, number % 3 == 0 {
                    let journey = DemoAndroidJourney.allCases[(number / 3 - 1) % DemoAndroidJourney.allCases.count]
                    group.addTask { await live(journey, customer: customer, play: play) }
                } else {
                    appStoreCustomers += 1
                    let journey = DemoJourney.allCases[(appStoreCustomers - 1) % DemoJourney.allCases.count]
                    group.addTask { await live(journey, customer: customer) }
                }
                try? await Task.sleep(for: arrivalInterval)
            }
            group.cancelAll()
        }
    }

    private func live(_ journey: DemoJourney, customer: String) async {
        let plan = journey.plan(customer: customer, products: products)
        for member in plan.customers { await simulator.addCustomer(member) }
        registry.arrived(plan.customers.map(\.id))
        do {
            for step in plan.steps {
                try Task.checkCancellation()
                switch step {
                case .store(let action):
                    _ = try await simulator.perform(action)
                case .appPosts(let who, let productId):
                    try await post(customer: who, productId: productId)
                    registry.posted(who)
                case .wait(let days):
                    try await Task.sleep(for: .milliseconds(simulator.scale.milliseconds(days: days)))
                }
            }
        } catch is CancellationError {
            return
        } catch {
            registry.failed("\(customer) (\(journey.rawValue)): \(error)")
        }
    }

    private func live(_ journey: DemoAndroidJourney, customer: String, play: DemoPlayStore) async {
        await simulator.addCustomer(SimulatedCustomer(id: customer, storefront: "USA"))
        registry.arrived([customer])
        let registry = self.registry
        let context = DemoAndroidJourney.Context(
            play: play, products: products, appStore: simulator,
            postToken: { [self] customer, token, productId, isProduct in
                try await postToken(customer: customer, token: token, productId: productId, isProduct: isProduct)
                registry.posted(customer)
            },
            postTransaction: { [self] customer in try await post(customer: customer, productId: nil) })
        do {
            try await journey.live(customer: customer, in: context)
        } catch is CancellationError {
            return
        } catch {
            registry.failed("\(customer) (\(journey.rawValue)): \(error)")
        }
    }

    /// What the customer's Android app does after Google Play Billing hands it a purchase:
    /// posts the purchase token to Storekeeper for its user.
    private func postToken(customer: String, token: String, productId: String, isProduct: Bool) async throws {
        try await client.expect(
            200, "POST", "/v1/apps/\(DemoAppSetup.appId)/customers/\(customer)/purchases/googleplay", key: publicKey,
            json: [
                "packageName": DemoPlayStore.packageName, "productId": productId, "purchaseToken": token,
                "type": isProduct ? "product" : "subscription",
            ])
    }

    /// What the customer's app does after StoreKit hands it a transaction: posts the signed
    /// transaction to Storekeeper for its user.
    private func post(customer: String, productId: String?) async throws {
        let signed = try await simulator.signedTransactions(customer: customer)
        let matching = signed.filter { productId == nil || Self.productId(of: $0) == productId }
        guard let latest = matching.last else { throw DemoFailure("\(customer) has nothing to post") }
        try await client.expect(
            200, "POST", "/v1/apps/\(DemoAppSetup.appId)/customers/\(customer)/transactions", key: publicKey,
            json: ["signedTransaction": latest])
    }

    /// The product of a signed transaction, read without verification (Storekeeper verifies).
    static func productId(of jws: String) -> String? {
        UnverifiedJWS.payload(jws, as: JWSTransactionDecodedPayload.self)?.productId
    }
}

/// Who has arrived in the demo and what went wrong: read by the progress line and the banner.
/// - Note: Thread-safe: everything sits behind a `Mutex`.
final class DemoRegistry: Sendable {
    private struct State {
        var customers: [String] = []
        var posted: Set<String> = []
        var failures = 0
        var lastFailure: String?
    }

    private let state = Mutex(State())

    func arrived(_ ids: [String]) { state.withLock { $0.customers += ids } }
    func posted(_ id: String) { state.withLock { _ = $0.posted.insert(id) } }

    func failed(_ message: String) {
        state.withLock {
            $0.failures += 1
            $0.lastFailure = message
        }
    }

    var customers: [String] { state.withLock { $0.customers } }
    func hasPosted(_ id: String) -> Bool { state.withLock { $0.posted.contains(id) } }
    var failures: (count: Int, last: String?) { state.withLock { ($0.failures, $0.lastFailure) } }
}
