/// Where savingsd keeps its files when nothing overrides them (SPEC section 2).
///
/// Pure: it takes the environment as a dictionary, so the daemon and savingsctl agree
/// on the same paths and tests can try every case.
public struct DefaultPaths: Sendable, Equatable {
    public enum Mode: String, Sendable, CaseIterable {
        case systemd
        case system
        case user
    }

    public var mode: Mode
    public var database: String
    public var socket: String
    /// The configuration file to read when it exists.
    public var config: String

    public static let databaseFile = "savings.db"
    public static let socketFile = "savingsd.sock"
    public static let configFile = "savingsd.toml"

    public static let system = DefaultPaths(
        mode: .system,
        database: "/var/lib/savingsd/\(databaseFile)",
        socket: "/run/savingsd/\(socketFile)",
        config: "/etc/savingsd/\(configFile)"
    )

    /// Resolves the default paths: systemd's directories when set, else `--system`, else user mode.
    public static func resolve(environment env: [String: String], system: Bool, uid: UInt32) -> DefaultPaths {
        func first(_ key: String) -> String? {
            // systemd passes colon-separated lists when a unit declares several directories.
            guard let value = env[key], !value.isEmpty else { return nil }
            return value.split(separator: ":").first.map(String.init)
        }
        let fallback = system ? Self.system : user(environment: env, uid: uid)
        let state = first("STATE_DIRECTORY")
        let runtime = first("RUNTIME_DIRECTORY")
        let configuration = first("CONFIGURATION_DIRECTORY")
        if state == nil && runtime == nil && configuration == nil { return fallback }
        return DefaultPaths(
            mode: .systemd,
            database: state.map { join($0, databaseFile) } ?? fallback.database,
            socket: runtime.map { join($0, socketFile) } ?? fallback.socket,
            config: configuration.map { join($0, configFile) } ?? fallback.config
        )
    }

    /// User mode, also for root in a shell: XDG base directories.
    public static func user(environment env: [String: String], uid: UInt32) -> DefaultPaths {
        func nonEmpty(_ key: String) -> String? {
            guard let value = env[key], value.hasPrefix("/") else { return nil }
            return value
        }
        let home = nonEmpty("HOME") ?? "/tmp"
        let data = nonEmpty("XDG_DATA_HOME") ?? join(home, ".local/share")
        let config = nonEmpty("XDG_CONFIG_HOME") ?? join(home, ".config")
        // Without a session runtime directory, fall back to a private per-user directory in /tmp.
        let runtime = nonEmpty("XDG_RUNTIME_DIR").map { join($0, "savingsd") } ?? "/tmp/savingsd-\(uid)"
        return DefaultPaths(
            mode: .user,
            database: join(join(data, "savingsd"), databaseFile),
            socket: join(runtime, socketFile),
            config: join(join(config, "savingsd"), configFile)
        )
    }

    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
