/// The version of this Storekeeper build: the one place it is written. `storekeeper --version`
/// prints it and `serve` logs it when it starts listening (`server.listening`, key `version`).
/// The OpenAPI document's `info.version` is the API's version, not this.
public enum StorekeeperVersion {
    public static let current = "0.1.0"
}
