import AppStoreSimulator
import Foundation

/// What the demo prints once it runs: where everything is, the keys (shown this once), and
/// curl commands that work as printed.
/// - Note: Immutable value.
struct DemoBanner {
    let baseURL: String
    let simulatorURL: String
    let playURL: String
    let simulatorDirectory: String
    let databasePath: String
    let app: SimulatedApp
    let keys: DemoAppSetup.Keys
    let adminKey: String
    let generatedAdminKey: Bool
    let options: DemoCommand.Options

    var text: String {
        let apps = "\(baseURL)/v1/apps/\(DemoAppSetup.appId)"
        let month = String(format: "%g", options.monthSeconds)
        let arrival = options.arrivalInterval.components.seconds
        return """

            Storekeeper demo is running at \(baseURL)

              Dashboard   \(baseURL)/dashboard   (sign in with the secret or the admin key below)
              App Store   the simulator at \(simulatorURL) (Sandbox; one month lasts \(month) s)
                          CA and In-App Purchase key kept in \(simulatorDirectory)
              Google Play the Play simulator at \(playURL) (\(DemoPlayStore.packageName),
                          test purchases: Sandbox; same clock), pushing to Storekeeper
              database    \(databasePath) (SQLite, recreated at every start)
              app         \(DemoAppSetup.appId) (\(app.bundleId)): monthly and yearly subscriptions with a
                          one-week free trial, a lifetime unlock, coins; entitlements pro and lifetime
              customers   a new one every \(arrival) s (user-0001, user-0002, …) living through trials,
                          renewals, cancellations, billing issues, upgrades, downgrades, refunds,
                          family sharing and consumables; every third one (user-0003, user-0006, …)
                          an Android customer buying on Google Play (one also on the App Store)

            Keys (shown only now):
              public  \(keys.publicKey)   the app: post purchases, read its user
              secret  \(keys.secretKey)   your backend: events, facts, catalog, webhooks
              admin   \(adminKey)   \(generatedAdminKey ? "(generated for this run) " : "")apps and keys

            Try, while it runs:
              curl -s -H 'Authorization: Bearer \(keys.publicKey)' \\
                \(apps)/customers/user-0001
              curl -s -H 'Authorization: Bearer \(keys.secretKey)' \\
                \(apps)/customers/user-0001/events
              curl -s -H 'Authorization: Bearer \(keys.secretKey)' \\
                \(apps)/customers/user-0005/transactions
              curl -s -H 'Authorization: Bearer \(keys.publicKey)' \\
                \(apps)/customers/user-0003
              curl -s -H 'Authorization: Bearer \(keys.secretKey)' \\
                '\(apps)/analytics/revenue?environment=Sandbox&store=googlePlay'
              curl -s \(baseURL)/metrics | grep '^storekeeper_notifications_total'
              curl -s \(baseURL)/openapi.json | head -c 400; echo

            Progress every \(options.progressInterval.components.seconds) s below; Ctrl-C stops.

            """
    }
}
