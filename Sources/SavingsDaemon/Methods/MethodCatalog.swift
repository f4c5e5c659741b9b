import Logging
import SavingsRPC

/// Every method savingsd serves, registered in one place.
public enum MethodCatalog {
    static func registry(context: DaemonContext, refresher: RateRefresher, syncers: Syncers, logger: Logger) -> MethodRegistry {
        var registry = MethodRegistry()
        DaemonMethods.register(into: &registry, context: context)
        GoalMethods.register(into: &registry, context: context)
        ContributionMethods.register(into: &registry, context: context)
        AssetMethods.register(into: &registry, context: context)
        WatchMethods.register(into: &registry, context: context, syncers: syncers)
        LinkMethods.register(into: &registry, context: context, syncer: syncers.links)
        LedgerMethods.register(into: &registry, context: context)
        RateMethods.register(into: &registry, context: context, refresher: refresher)
        PlanMethods.register(into: &registry, context: context)
        ExecutionMethods.register(into: &registry, context: context)
        EventMethods.register(into: &registry, context: context)
        DataMethods.register(into: &registry, context: context, logger: logger)
        LegacyMethods.register(into: &registry, context: context, logger: logger)
        LegacyMethods.registerDemo(into: &registry, context: context, logger: logger)
        registry.registerIntrospection(title: SavingsDaemonInfo.name, version: SavingsDaemonInfo.version)
        return registry
    }

    /// A dispatcher that logs internal failures (never sent to clients) and announces writes.
    static func dispatcher(context: DaemonContext, goals: GoalWatcher, refresher: RateRefresher, syncers: Syncers,
                           logger: Logger) -> RPCDispatcher {
        // Goal checks value every goal: a burst of writes runs them once or twice, not once per
        // write, and a read right after a write does not share the CPU with them.
        let checks = Coalescer(after: .milliseconds(250)) { await goals.check() }
        let throttle = LogThrottle(logger: logger)
        return RPCDispatcher(registry: registry(context: context, refresher: refresher, syncers: syncers, logger: logger),
                      maxBatch: context.liveConfig.current.maxBatch, onInternalError: { method, error in
            // A client that goes away mid-answer (a download cut off) is not the daemon's failure.
            guard !(error is ConnectionGone) else {
                throttle.note("client gone", "\(method) cut short: the client went away") {
                    "\($0) more answers cut short in the last 1 s: the client went away"
                }
                return
            }
            logger.error("method failed: \(error)", metadata: ["method": "\(method)"])
        }, onWrite: { method in
            context.events.publish("data.changed", ["method": .string(method)])
            checks.request()
        })
    }
}
