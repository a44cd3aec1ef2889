import Entitlements
import Foundation

/// Why a scenario file cannot be run: the file, the step or customer at fault, and what is wrong.
struct ScenarioFileError: Error, CustomStringConvertible, Equatable {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A scenario's `store` field: which simulator a step drives. Spelled as CustomerInfo and the
/// webhooks spell a purchase's store (`Marketplace`): `app_store` (the default) or `play_store`.
enum StoreField {
    static let customerStoresKey = CodingUserInfoKey(rawValue: "storekeeper.e2e.customerStores")!

    static func parse(_ text: String, at place: String) throws(ScenarioFileError) -> Marketplace {
        guard let store = Marketplace(rawValue: text) else {
            throw ScenarioFileError(
                "\(place): store \"\(text.prefix(64))\" is not "
                    + Marketplace.allCases.map(\.rawValue).joined(separator: " or "))
        }
        return store
    }

    /// The customers' stores, read before the steps: each is the default of its customer's steps.
    struct CustomerStores: Decodable {
        struct Entry: Decodable {
            var id: String
            var store: String?
        }
        var customers: [Entry]?

        func defaults() throws(ScenarioFileError) -> [String: Marketplace] {
            var stores: [String: Marketplace] = [:]
            for entry in customers ?? [] {
                if let text = entry.store { stores[entry.id] = try StoreField.parse(text, at: "customer \(entry.id)") }
            }
            return stores
        }
    }
}
