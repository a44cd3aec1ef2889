// swift-tools-version:6.0
// Storekeeper: App Store purchase validation and entitlements server.
// Layering follows ../shared/DESIGN.md: each module imports only the layers below it.
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]
// The layers every test goes through (JWS, models' Codable, the simulator's signing, storage
// rows, the engine) are optimised in debug builds too: at -Onone their byte loops and generic
// code ran about ten times slower, most of the test suite's CPU time. Tests stay at -Onone.
let hot: [SwiftSetting] = strict + [.unsafeFlags(["-O"], .when(configuration: .debug))]

let package = Package(
    name: "Storekeeper",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "storekeeper", targets: ["storekeeper"]),
        .library(name: "AppStoreModels", targets: ["AppStoreModels"]),
        .library(name: "AppStoreTrust", targets: ["AppStoreTrust"]),
        .library(name: "Entitlements", targets: ["Entitlements"]),
        .library(name: "Storage", targets: ["Storage"]),
        .library(name: "AppStoreSimulator", targets: ["AppStoreSimulator"]),
    ],
    targets: [
        // System libraries from Debian: module maps plus tiny inline shims for macros and variadics.
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // glibc's malloc.h (mallopt), part of libc: nothing to link or install.
        .systemLibrary(name: "CMalloc"),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        // libcurl (the OpenSSL flavour, the soname FoundationNetworking links) for pinned webhook connections.
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),

        .target(name: "AppStoreModels", swiftSettings: hot),
        .target(name: "AppStoreTrust", dependencies: ["AppStoreModels", "COpenSSL"], swiftSettings: hot),
        // Secrets at rest: AES-256-GCM sealing under a key-encryption key (docs/server.md).
        .target(name: "SecretSealing", dependencies: ["COpenSSL"], swiftSettings: strict),
        .target(name: "AppStoreClient", dependencies: ["AppStoreModels", "AppStoreTrust"], swiftSettings: strict),
        .target(name: "Entitlements", dependencies: ["AppStoreModels"], swiftSettings: hot),
        // Google Play (issue 15): wire formats, RS256 trust (push OIDC tokens, service accounts), API client.
        .target(name: "GooglePlayModels", dependencies: ["AppStoreModels"], swiftSettings: strict),
        .target(
            name: "GooglePlayTrust", dependencies: ["GooglePlayModels", "AppStoreTrust", "COpenSSL"],
            swiftSettings: strict),
        .target(
            name: "GooglePlayClient", dependencies: ["GooglePlayModels", "GooglePlayTrust", "AppStoreClient"],
            swiftSettings: strict),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD"], swiftSettings: strict),
        .target(
            name: "AppStoreSimulator", dependencies: ["AppStoreModels", "AppStoreTrust", "HTTPServer"],
            swiftSettings: hot),
        // The fake Google Play beside the App Store simulator (same SimulatorClock).
        .target(
            name: "GooglePlaySimulator",
            dependencies: [
                "AppStoreModels", "AppStoreSimulator", "GooglePlayModels", "GooglePlayTrust", "HTTPServer",
            ],
            swiftSettings: strict),
        .target(
            name: "Storage", dependencies: ["AppStoreModels", "Entitlements", "CSQLite", "CLibPQ", "COpenSSL"],
            swiftSettings: hot),
        // Everything a fact goes through, without HTTP: the compiler keeps HTTPServer out of it.
        .target(
            name: "StorekeeperIngestion",
            dependencies: [
                "AppStoreModels", "AppStoreTrust", "AppStoreClient", "Entitlements", "Storage", "SecretSealing",
                "GooglePlayModels", "GooglePlayTrust", "GooglePlayClient", "CMalloc",
            ],
            swiftSettings: hot),
        .target(
            name: "StorekeeperServer",
            dependencies: [
                "AppStoreModels", "AppStoreTrust", "AppStoreClient", "Entitlements", "Storage", "HTTPServer",
                "StorekeeperIngestion", "SecretSealing", "CCurl", "GooglePlayModels", "GooglePlayTrust",
                "GooglePlayClient",
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "storekeeper",
            dependencies: [
                "AppStoreModels", "AppStoreTrust", "AppStoreClient", "Entitlements", "Storage", "AppStoreSimulator",
                "HTTPServer", "StorekeeperIngestion", "StorekeeperServer", "SecretSealing", "GooglePlaySimulator",
                "GooglePlayTrust",
            ],
            swiftSettings: strict),
        // The HTTP core alone, served for scripts/bench-http.sh.
        .executableTarget(name: "HTTPCoreBench", dependencies: ["HTTPServer"], swiftSettings: strict),
        .executableTarget(
            name: "StorekeeperBench",
            dependencies: [
                "AppStoreModels", "AppStoreTrust", "Entitlements", "Storage", "StorekeeperIngestion", "CSQLite",
                "CLibPQ", "AppStoreSimulator",
            ],
            swiftSettings: strict),
        // Shared test helpers: test CA, signed-payload builders, conformance corpus access, workloads.
        .target(
            name: "StorekeeperTesting",
            dependencies: ["AppStoreModels", "AppStoreTrust", "Entitlements", "Storage"],
            swiftSettings: strict),
        // Child processes the storage tests spawn (crash, group-commit crash, multi-process ingestion); not a product.
        .executableTarget(
            name: "StorekeeperTestProbes",
            dependencies: [
                "AppStoreModels", "AppStoreTrust", "Entitlements", "Storage", "StorekeeperIngestion",
                "StorekeeperTesting",
            ],
            swiftSettings: strict),

        .testTarget(
            name: "AppStoreModelsTests", dependencies: ["AppStoreModels", "StorekeeperTesting"], swiftSettings: strict),
        .testTarget(
            name: "AppStoreTrustTests", dependencies: ["AppStoreTrust", "StorekeeperTesting"], swiftSettings: strict),
        .testTarget(
            name: "AppStoreClientTests", dependencies: ["AppStoreClient", "StorekeeperTesting", "HTTPServer"],
            swiftSettings: strict),
        .testTarget(
            name: "EntitlementsTests",
            dependencies: ["Entitlements", "Storage", "StorekeeperIngestion", "GooglePlayModels"],
            swiftSettings: strict),
        .testTarget(
            name: "AppStoreSimulatorTests",
            dependencies: ["AppStoreSimulator", "StorekeeperTesting", "AppStoreClient", "HTTPServer"],
            exclude: ["Scenarios"], swiftSettings: strict),
        .testTarget(
            name: "StorekeeperServerTests",
            dependencies: [
                "StorekeeperServer", "StorekeeperIngestion", "StorekeeperTesting", "HTTPServer", "Storage",
                "AppStoreClient", "AppStoreModels", "AppStoreTrust", "Entitlements", "SecretSealing", "COpenSSL",
                "AppStoreSimulator", "GooglePlayModels", "GooglePlayTrust", "GooglePlayClient", "GooglePlaySimulator",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "AppStoreSimulator", "StorekeeperServer", "StorekeeperIngestion", "StorekeeperTesting",
                "AppStoreClient",
                "AppStoreModels", "AppStoreTrust", "HTTPServer", "Storage", "SecretSealing", "GooglePlayModels",
                "GooglePlayTrust", "GooglePlayClient", "GooglePlaySimulator", "Entitlements",
            ],
            exclude: ["Scenarios"], swiftSettings: strict),
        .testTarget(
            name: "StorageTests",
            dependencies: [
                "Storage", "Entitlements", "AppStoreModels", "StorekeeperTesting", "StorekeeperBench",
                "StorekeeperIngestion",
            ],
            swiftSettings: strict),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer"], swiftSettings: strict),
        .testTarget(
            name: "StorekeeperCLITests",
            dependencies: [
                "StorekeeperTesting", "AppStoreTrust", "HTTPServer", "Storage", "AppStoreModels", "AppStoreSimulator",
                "StorekeeperIngestion", "Entitlements", "GooglePlaySimulator",
            ],
            swiftSettings: strict),
        .testTarget(name: "SecretSealingTests", dependencies: ["SecretSealing"], swiftSettings: strict),
        .testTarget(
            name: "GooglePlaySimulatorTests",
            dependencies: [
                "GooglePlaySimulator", "GooglePlayModels", "GooglePlayTrust", "AppStoreSimulator", "AppStoreModels",
                "HTTPServer",
            ],
            swiftSettings: strict),
        .testTarget(name: "GooglePlayModelsTests", dependencies: ["GooglePlayModels"], swiftSettings: strict),
        .testTarget(
            name: "GooglePlayTrustTests", dependencies: ["GooglePlayTrust", "GooglePlayModels", "AppStoreTrust"],
            swiftSettings: strict),
        .testTarget(
            name: "GooglePlayClientTests",
            dependencies: [
                "GooglePlayClient", "GooglePlayTrust", "GooglePlayModels", "AppStoreClient", "HTTPServer",
                "GooglePlaySimulator", "AppStoreSimulator", "AppStoreModels",
            ],
            swiftSettings: strict),
    ]
)
