import Foundation
import Logging
import SavingsStore
import ServiceLifecycle

/// Periodic automatic backups every `[database] backup_interval` seconds (0 = off), pruned to
/// `keep_backups`. A failed backup is one log line; the next attempt comes on schedule.
struct BackupService: Service {
    let context: DaemonContext
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                let interval = context.liveConfig.current.backupInterval
                guard interval > 0 else {
                    try? await Pause.sleep(for: .seconds(60))
                    continue
                }
                try? await Pause.sleep(for: .seconds(interval))
                guard !Task.isCancelled, context.liveConfig.current.backupInterval > 0 else { continue }
                do {
                    let info = try await context.database.automaticBackup(
                        reason: "periodic", policy: context.liveConfig.current.backupPolicy, now: context.clock.now())
                    logger.info("periodic backup written", metadata: ["path": "\(info.path)", "bytes": "\(info.bytes)"])
                } catch {
                    logger.warning("periodic backup failed: \(error)")
                }
            }
        }
    }
}
