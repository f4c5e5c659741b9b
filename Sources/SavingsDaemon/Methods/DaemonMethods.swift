import Foundation
import SavingsRPC

/// `daemon.*`: liveness and the daemon's own state.
enum DaemonMethods {
    static func register(into registry: inout MethodRegistry, context: DaemonContext) {
        registry.registerImmediate(MethodSpec(
            "daemon.ping", summary: "Check that the daemon answers.",
            result: ResultSpec("pong", "{\"pong\": true}", schema: ["type": "object", "properties": ["pong": ["type": "boolean"]]]),
            writes: false)) { _ in
            ["pong": true]
        }

        registry.register(MethodSpec(
            "daemon.status", summary: "Version, uptime, mode, paths, schema version and counts.",
            result: ResultSpec("status", "the daemon's state", schema: [
                "type": "object",
                "required": ["version", "pid", "uptime_seconds", "mode", "database", "socket", "schema_version", "counts"],
            ]),
            writes: false)) { _, _ in
            let config = context.liveConfig.current
            let uptime = ContinuousClock.now - context.startedAt
            let counts = try await context.database.counts()
            let oldestRate = try await context.database.oldestCurrentRate()
            return [
                "version": .string(SavingsDaemonInfo.version),
                "pid": .int(Int(context.pid)),
                "uptime_seconds": .int(Int(uptime.components.seconds)),
                "mode": .string(config.mode.rawValue),
                "database": .string(config.databasePath),
                "socket": .string(config.socketPath),
                "config_file": .optional(config.configFile),
                "timezone": .string(config.timeZone.identifier),
                "schema_version": .int(try await context.database.schemaVersion()),
                "last_rollover_month": .optional(try await context.database.metadata(MonthScheduler.lastRolloverKey)),
                "counts": .object(counts.mapValues { .int($0) }),
                "now": Wire.timestamp(context.clock.now()),
                "rates_age_seconds": Wire.age(oldestRate, now: context.clock.now()),
            ]
        }
    }
}

/// Facts about this build.
public enum SavingsDaemonInfo {
    public static let version = "0.1.0"
    public static let name = "savingsd"
}
