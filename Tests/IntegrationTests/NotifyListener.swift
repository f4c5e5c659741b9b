import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real sd_notify endpoint: a Unix datagram socket whose path goes into `NOTIFY_SOCKET`.
final class NotifyListener {
    let path: String
    private let fd: Int32
    private(set) var states: [String] = []

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket() failed") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else { throw HarnessError("bind \(path) failed: \(String(cString: strerror(errno)))") }
    }

    deinit { close(fd) }

    /// Waits until a datagram carried `state` (e.g. "READY=1"); true if it arrived in time.
    @discardableResult
    func wait(for state: String, timeout: TimeInterval = 60) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if states.contains(state) { return true }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return false }
            drain(waitMilliseconds: Int32(min(remaining, 0.2) * 1000))
        }
    }

    /// Reads whatever has arrived within `waitMilliseconds`.
    func drain(waitMilliseconds: Int32 = 0) {
        var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pollFD, 1, waitMilliseconds) > 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard count > 0 else { return }
            let message = String(decoding: buffer[..<count], as: UTF8.self)
            states.append(contentsOf: message.split(separator: "\n").map(String.init))
        }
    }

    func count(of state: String) -> Int {
        drain()
        return states.filter { $0 == state }.count
    }
}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
