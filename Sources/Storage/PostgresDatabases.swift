import Foundation

/// Creating and dropping whole databases on a PostgreSQL server, outside any store: what a
/// fresh, isolated database per test run or per throwaway instance needs. The store itself never
/// does this (a production database is made by its operator).
public enum PostgresDatabases {
    /// Creates `name` on the server `serverURL` points at and answers the URL of the new database
    /// (the same user, host, port and options). `name` must be a plain lowercase identifier
    /// (`[a-z_][a-z0-9_]{0,62}`): identifiers cannot be bound parameters.
    public static func create(_ name: String, on serverURL: String) throws(StoreError) -> String {
        try execute("CREATE DATABASE \(try identifier(name))", on: serverURL)
        guard var components = URLComponents(string: serverURL) else {
            throw StoreError(.invalidConfiguration, "not a postgres:// URL")
        }
        components.path = "/" + name
        guard let url = components.string else {
            throw StoreError(.invalidConfiguration, "the postgres:// URL does not re-encode")
        }
        return url
    }

    /// Drops `name`, ending the sessions still connected to it.
    public static func drop(_ name: String, on serverURL: String) throws(StoreError) {
        try execute("DROP DATABASE IF EXISTS \(try identifier(name)) WITH (FORCE)", on: serverURL)
    }

    static func identifier(_ name: String) throws(StoreError) -> String {
        let bytes = Array(name.utf8)
        let valid =
            (1...63).contains(bytes.count)
            && bytes.enumerated().allSatisfy { index, byte in
                byte == UInt8(ascii: "_") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (index > 0 && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte))
            }
        guard valid else {
            throw StoreError(.invalidConfiguration, "a database name is [a-z_][a-z0-9_]{0,62}")
        }
        return name
    }

    private static func execute(_ sql: String, on serverURL: String) throws(StoreError) {
        let configuration = try PostgresConfiguration(url: serverURL)
        let connection = try PostgresConnection(
            conninfo: configuration.conninfo, statementTimeoutMilliseconds: nil, preparesStatements: false)
        defer { connection.close() }
        _ = try connection.query(sql, [])
    }
}
