import Foundation
import SavingsCore
import SavingsRPC

/// `daemon.*`: liveness and the daemon's own state.
enum DaemonMethods {
    static func register(into registry: inout MethodRegistry, context: DaemonContext) {
        registry.registerImmediate(MethodSpec(
            "daemon.ping", summary: "Check that the daemon answers.",
            result: ResultSpec("pong", "{\"pong\": true}", schema: Schema.object(["pong": Schema.constant(true)])),
            writes: false)) { _ in
            ["pong": true]
        }

        registry.register(MethodSpec(
            "daemon.status", summary: "Version, uptime, mode, paths, schema version and counts.",
            result: ResultSpec("status", "the daemon's state", schema: Schema.object([
                "version": Schema.string, "pid": Schema.count, "uptime_seconds": Schema.count,
                "mode": Schema.enumeration(DefaultPaths.Mode.self),
                "database": Schema.string, "socket": Schema.string, "config_file": Schema.nullable(Schema.string),
                "timezone": Schema.described(Schema.string, "the IANA zone months and dates are counted in"),
                "schema_version": Schema.count,
                "last_rollover_month": Schema.nullable(Schema.month),
                "counts": Schema.object(["goals": Schema.count, "archived_goals": Schema.count, "assets": Schema.count,
                                         "transactions": Schema.count, "allocations": Schema.count, "rates": Schema.count]),
                "now": Schema.described(Schema.timestamp, "the daemon's clock"),
                "rates_age_seconds": Schema.described(Schema.nullable(Schema.count), "age of the oldest current rate; null without rates"),
            ])),
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
