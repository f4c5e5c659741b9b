import Foundation
import Logging
import SavingsStore
import ServiceLifecycle

/// Proves liveness: checks that the database answers, then pings systemd's watchdog (at half
/// of `WatchdogSec`) and refreshes the `STATUS=` line.
struct HeartbeatService: Service {
    let database: SavingsDatabase
    let notifier: SystemdNotifier
    let logger: Logger
    let interval: Duration
    let watchdogEnabled: Bool

    init(database: SavingsDatabase, notifier: SystemdNotifier, logger: Logger) {
        self.database = database
        self.notifier = notifier
        self.logger = logger
        if let watchdog = notifier.watchdogInterval() {
            self.interval = watchdog / 2
            self.watchdogEnabled = true
        } else {
            self.interval = .seconds(60)
            self.watchdogEnabled = false
        }
    }

    func run() async throws {
        if watchdogEnabled { logger.info("systemd watchdog enabled", metadata: ["ping_interval": "\(interval)"]) }
        await cancelWhenGracefulShutdown { await beat() }
    }

    private func beat() async {
        while !Task.isCancelled {
            do {
                try await Pause.sleep(for: interval)
            } catch {
                return
            }
            do {
                try await database.ping()
                if watchdogEnabled { notifier.watchdog() }
                notifier.status(try await Self.statusLine(database))
            } catch is CancellationError {
                return
            } catch {
                // No watchdog ping: if the database stays unusable systemd restarts us.
                logger.error("health check failed: \(error)")
            }
        }
    }

    /// "serving 3 goals, rates 2 min old": the STATUS= line.
    static func statusLine(_ database: SavingsDatabase, now: Date = Date()) async throws -> String {
        let goals = try await database.counts()["goals"] ?? 0
        var line = "serving \(goals) goal\(goals == 1 ? "" : "s")"
        if let oldest = try await database.oldestCurrentRate() {
            line += ", rates \(max(0, Int(now.timeIntervalSince(oldest)) / 60)) min old"
        }
        return line
    }
}
