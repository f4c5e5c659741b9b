import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// sd_notify(3) and friends. Harmless no-ops when not run by systemd (no `NOTIFY_SOCKET`).
public struct SystemdNotifier: Sendable {
    public init() {}

    public func notify(_ state: String) {
        _ = sd_notify(0, state)
    }

    public func ready(status: String) { notify("READY=1\nSTATUS=\(status)") }
    public func status(_ text: String) { notify("STATUS=\(text)") }
    public func stopping() { notify("STOPPING=1\nSTATUS=shutting down") }
    public func watchdog() { notify("WATCHDOG=1") }

    /// `RELOADING=1` with the monotonic timestamp newer systemd versions expect.
    public func reloading() {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let usec = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
        notify("RELOADING=1\nMONOTONIC_USEC=\(usec)")
    }

    /// The watchdog interval systemd expects pings within, when enabled for this process.
    public func watchdogInterval() -> Duration? {
        var usec: UInt64 = 0
        guard sd_watchdog_enabled(0, &usec) > 0, usec > 0 else { return nil }
        return .microseconds(Int64(usec))
    }

    /// The first socket passed by socket activation (`LISTEN_FDS`), if it is a Unix stream socket.
    public func activatedSocket() -> Int32? {
        let count = sd_listen_fds(1)
        guard count >= 1 else { return nil }
        let fd = SD_LISTEN_FDS_START
        guard sd_is_socket_unix(fd, Int32(SOCK_STREAM.rawValue), 1, nil, 0) > 0 else { return nil }
        return fd
    }
}
