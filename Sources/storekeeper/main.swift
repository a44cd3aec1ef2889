import AppStoreModels
import AppStoreTrust
import Foundation

let usage = """
    storekeeper: App Store purchase validation and entitlements

    commands:
      serve [--config FILE] [--database URL] [--listen HOST:PORT] [--demo]   the HTTP API (docs/server.md)
      verify [--root FILE]... [--bundle-id ID] [--app-apple-id N] [--environment ENV] [--online]
             [--type transaction|renewal|notification|app-transaction|auto] [JWS|-]
      receipt decode [--root FILE]... [FILE|-]          decode (and verify) a StoreKit 1 app receipt
      ca init DIR [--name NAME] [--years N]            write a test CA shaped like Apple's
      jws sign --key KEY --chain LEAF,INTERMEDIATE,ROOT [FILE|-]
      jws verify --public-key PEM [JWS|-]              check an ES256 token against a known key
      token --key P8 --key-id ID --issuer-id ID --bundle-id ID   App Store Server API bearer token
      offer sign|verify|jws …                          promotional offer signatures (v1, JWS v2)
      migrate --database URL [--check]                 apply schema migrations (SQLite path or postgres:// URL)
      secrets new-key|status|rotate …                  the key sealing stored secrets (docs/server.md)
      simulate serve|run …                             local App Store simulator (Server API, verifyReceipt,
                                                       notifications, scenarios)
      quickstart [DIR]                                 sign and verify sample payloads end to end
      appstore transaction|history|statuses|refunds|notifications|test-notification …   App Store Server API
    """

func run(_ arguments: [String]) -> Int32 {
    let now = Timestamp(Date())
    let switches: Set<String> = ["--online", "--help"]
    do {
        guard let command = arguments.first else { throw UsageError(usage) }
        let rest = arguments.dropFirst()
        switch command {
        case "verify":
            try TrustCommands.verify(try CommandLineArguments(rest, switches: switches))
        case "receipt":
            guard rest.first == "decode" else {
                throw UsageError("usage: storekeeper receipt decode [--root FILE] [FILE|-]")
            }
            try TrustCommands.receiptDecode(try CommandLineArguments(rest.dropFirst(), switches: switches))
        case "ca":
            guard rest.first == "init" else { throw UsageError("usage: storekeeper ca init DIR") }
            try TrustCommands.caInit(try CommandLineArguments(rest.dropFirst(), switches: switches), now: now)
        case "jws":
            let parsed = try CommandLineArguments(rest.dropFirst(), switches: switches)
            switch rest.first {
            case "sign": try TrustCommands.jwsSign(parsed)
            case "verify": try TrustCommands.jwsVerify(parsed)
            default: throw UsageError("usage: storekeeper jws sign|verify …")
            }
        case "token":
            try TrustCommands.token(try CommandLineArguments(rest, switches: switches))
        case "offer":
            try TrustCommands.offer(try CommandLineArguments(rest, switches: switches), now: now)
        case "appstore": try AppStoreCommands.run(rest)
        case "serve": return ServeCommand.run(Array(rest))
        case "migrate": return try MigrateCommand.run(Array(rest))
        case "secrets": return SecretsCommands.run(Array(rest))
        case "simulate": return SimulateCommands.run(Array(rest))
        case "quickstart":
            try Quickstart.run(directory: rest.first ?? "data/quickstart", now: now)
        case "help", "--help", "-h":
            print(usage)
        default:
            throw UsageError("unknown command \(command)\n\n\(usage)")
        }
        return 0
    } catch let error as UsageError {
        FileHandle.standardError.write(Data((error.message + "\n").utf8))
        return 2
    } catch let error as TrustError {
        FileHandle.standardError.write(
            Data("\(error.category.rawValue) [\(error.rule.rawValue)]: \(error.detail)\n".utf8))
        return 1
    } catch {
        FileHandle.standardError.write(Data("error: \(error)\n".utf8))
        return 1
    }
}

exit(run(Array(CommandLine.arguments.dropFirst())))
