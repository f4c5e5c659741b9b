import AsyncHTTPClient
import Foundation
import Logging
import NIOPosix
import SavingsCore
import SavingsRPC
import SavingsStore
import ServiceLifecycle

/// One run of savingsd: load configuration, open and migrate the database, listen, serve
/// until SIGTERM/SIGINT, then shut down cleanly.
public enum Daemon {
    /// Validates the configuration and prints it; returns the process exit code.
    public static func checkConfig(options: DaemonOptions) -> Int32 {
        do {
            let config = try loadConfig(options: options)
            print(config.rendered)
            return 0
        } catch {
            FileHandle.standardError.write(Data("savingsd: invalid configuration: \(error.message)\n".utf8))
            return 1
        }
    }

    /// Runs the daemon to completion; returns the process exit code.
    public static func run(options: DaemonOptions, clock: any WallClock = SystemClock()) async -> Int32 {
        MemoryRelease.fixAllocatorThresholds()
        let environment = ProcessInfo.processInfo.environment
        let config: DaemonConfig
        do {
            config = try loadConfig(options: options)
        } catch {
            FileHandle.standardError.write(Data("savingsd: invalid configuration: \(error.message)\n".utf8))
            return 1
        }
        let logLevel = LogLevelControl(config.logLevel)
        JournalLogHandler.bootstrap(control: logLevel, environment: environment)
        let logger = Logger(label: "savingsd")
        signal(SIGPIPE, SIG_IGN)
        let notifier = SystemdNotifier()

        let database: SavingsDatabase
        let socket: ListeningSocket
        let listener: RPCListener
        let liveConfig = LiveConfig(config)
        let immediate = ImmediateDispatcher()
        do {
            try PrivatePaths.ensureParentDirectory(of: config.databasePath)
            database = try SavingsDatabase.open(path: config.databasePath, backups: config.backupPolicy, now: clock.now())
            NamelessFile.sweep(directory: config.transferDirectory)
            if let fd = notifier.activatedSocket() {
                socket = .activated(fd)
            } else {
                try PrivatePaths.ensureParentDirectory(of: config.socketPath)
                try PrivatePaths.checkSocketDirectory(of: config.socketPath)
                try PrivatePaths.clearStaleSocket(at: config.socketPath)
                socket = .path(config.socketPath)
            }
            listener = try await RPCServer.bind(socket: socket, liveConfig: liveConfig, immediate: immediate, logger: logger)
        } catch {
            logger.critical("cannot start: \(error)")
            notifier.status("failed to start: \(error)")
            return 1
        }

        let events = EventBus(clock: clock, logger: logger)
        let context = DaemonContext(database: database, clock: clock, liveConfig: liveConfig, events: events)
        let goals = GoalWatcher(context: context, logger: logger)
        await goals.check()
        // Rate requests share the daemon's event loops; the client is shut down after the services.
        let httpClient = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: ProviderHTTP.configuration,
                                    backgroundActivityLogger: logger)
        let refresher = RateRefresher(context: context, http: ProviderHTTP(client: httpClient), logger: logger)
        let proxies = ProxyClients(logger: logger)
        let syncer = ChainSyncer(context: context, http: ProviderHTTP(client: httpClient), proxies: proxies, logger: logger) { await goals.check() }
        let linkSyncer = LinkSyncer(context: context, http: ProviderHTTP(client: httpClient), proxies: proxies, logger: logger) { await goals.check() }
        let syncers = Syncers(chains: syncer, links: linkSyncer)
        let dispatcher = MethodCatalog.dispatcher(context: context, goals: goals, refresher: refresher, syncers: syncers, logger: logger)
        immediate.dispatcher = dispatcher
        let server = RPCServer(
            listener: listener, dispatcher: dispatcher,
            liveConfig: liveConfig, notifier: notifier, events: events, logger: logger,
            onListening: {
                let status = (try? await HeartbeatService.statusLine(database)) ?? "serving"
                notifier.ready(status: status)
                logger.notice("ready", metadata: [
                    "socket": "\(socketDescription(socket))", "database": "\(config.databasePath)",
                    "mode": "\(config.mode.rawValue)", "version": "\(SavingsDaemonInfo.version)",
                ])
            })
        let reload = ReloadService(liveConfig: liveConfig, logLevel: logLevel, notifier: notifier, logger: logger) {
            () throws(ConfigError) -> DaemonConfig in try loadConfig(options: options)
        }
        let probeSocket = listener.channel.localAddress?.pathname ?? config.socketPath
        let heartbeat = HeartbeatService(database: database, notifier: notifier, logger: logger) {
            await HeartbeatService.pingOverSocket(probeSocket)
        }
        let hook = EventHookService(events: events, liveConfig: liveConfig, logger: logger)
        let scheduler = MonthScheduler(context: context, logger: logger)
        // Plans of the current month exist and the rollover is recorded before READY=1.
        await scheduler.check()
        // Shut down in reverse order: the server first, so the heartbeat keeps running while
        // in-flight requests finish.
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [
                .init(service: heartbeat, serviceName: "heartbeat"),
                .init(service: reload, serviceName: "reload"),
                .init(service: hook, serviceName: "event-hook"),
                .init(service: scheduler, serviceName: "month-scheduler"),
                .init(service: RatesService(refresher: refresher), serviceName: "rates"),
                .init(service: BackupService(context: context, logger: logger), serviceName: "backups"),
                .init(service: IdleTrimService(requests: server.requests), serviceName: "idle-trim"),
                .init(service: server, serviceName: "rpc-server"),
                // Stopped first: a sync in flight ends at once, and an asset.sync waiting for it
                // is answered before the server stops.
                .init(service: SyncService(syncer: syncer), serviceName: "chain-sync"),
                .init(service: SyncService(syncer: linkSyncer), serviceName: "link-sync"),
            ],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))

        var exitCode: Int32 = 0
        do {
            try await group.run()
        } catch {
            logger.error("stopped on error: \(error)")
            exitCode = 1
        }
        if case .path(let path) = socket { unlink(path) }
        await proxies.shutdown()
        try? await httpClient.shutdown()
        do {
            try database.close()
        } catch {
            logger.error("closing the database failed: \(error)")
            exitCode = 1
        }
        logger.notice("stopped")
        return exitCode
    }

    static func loadConfig(options: DaemonOptions) throws(ConfigError) -> DaemonConfig {
        try ConfigLoader.load(options: options, environment: ProcessInfo.processInfo.environment, uid: getuid()) { path in
            guard FileManager.default.fileExists(atPath: path) else { return nil }
            return try String(contentsOfFile: path, encoding: .utf8)
        }
    }

    private static func socketDescription(_ socket: ListeningSocket) -> String {
        switch socket {
        case .activated(let fd): "systemd socket (fd \(fd))"
        case .path(let path): path
        }
    }
}
