import Logging
import ServiceLifecycle
import UnixSignals

/// SIGHUP: re-reads the configuration file. Live settings change at once; an invalid file
/// keeps the running configuration and says why.
struct ReloadService: Service {
    let liveConfig: LiveConfig
    let logLevel: LogLevelControl
    let notifier: SystemdNotifier
    let logger: Logger
    let load: @Sendable () throws(ConfigError) -> DaemonConfig

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        for await _ in signals.cancelOnGracefulShutdown() {
            notifier.reloading()
            do {
                let new = try load()
                let restartOnly = liveConfig.reload(new)
                logLevel.current = new.logLevel
                logger.notice("configuration reloaded", metadata: ["log_level": "\(new.logLevel.rawValue)"])
                for key in restartOnly {
                    logger.warning("\(key) changed in the configuration; it takes effect after a restart")
                }
            } catch {
                logger.error("configuration reload failed, keeping the running configuration: \(error.message)")
            }
            notifier.notify("READY=1")
        }
    }
}
