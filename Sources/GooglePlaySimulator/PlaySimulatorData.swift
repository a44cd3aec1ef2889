import Foundation
import GooglePlayTrust

/// The Play simulator's keys kept on disk beside the App Store simulator's (`--data DIR`), so a
/// server configured once keeps trusting runs of `storekeeper simulate run`: the service
/// account whose JSON key the app's Play side holds (`DIR/play/service-account.json`) and the
/// key that signs push tokens (`DIR/play/push-key.pem`), both created on first use, mode 0600.
/// - Note: Immutable; `Sendable`.
public struct PlaySimulatorData: Sendable {
    public let serviceAccount: ServiceAccountKey
    public let pushKey: RSAPrivateKey
    public let serviceAccountFile: URL

    /// Opens (or creates) the files under `directory`; a new service account's key file sends
    /// its assertions to `tokenURI` (the simulator's `/token`; keep the port it names).
    public static func open(_ directory: URL, tokenURI: URL) throws -> PlaySimulatorData {
        let play = directory.appendingPathComponent("play")
        try FileManager.default.createDirectory(at: play, withIntermediateDirectories: true)
        let accountFile = play.appendingPathComponent("service-account.json")
        let keyFile = play.appendingPathComponent("push-key.pem")
        let account: ServiceAccountKey
        if let data = FileManager.default.contents(atPath: accountFile.path) {
            account = try ServiceAccountKey(json: data)
        } else {
            account = ServiceAccountKey(
                clientEmail: "storekeeper@simulator.iam.gserviceaccount.com", privateKeyId: "sim-sa-data",
                privateKey: try RSAPrivateKey.generate(), tokenURI: tokenURI, projectId: "simulator")
            try write(account.json, to: accountFile)
        }
        let pushKey: RSAPrivateKey
        if let data = FileManager.default.contents(atPath: keyFile.path) {
            pushKey = try RSAPrivateKey(pem: String(decoding: data, as: UTF8.self))
        } else {
            pushKey = try RSAPrivateKey.generate()
            try write(Data(pushKey.pkcs8PEM.utf8), to: keyFile)
        }
        return PlaySimulatorData(serviceAccount: account, pushKey: pushKey, serviceAccountFile: accountFile)
    }

    private static func write(_ data: Data, to file: URL) throws {
        guard FileManager.default.createFile(atPath: file.path, contents: data, attributes: [.posixPermissions: 0o600])
        else { throw PlayScenarioError("cannot write \(file.path)") }
    }
}
