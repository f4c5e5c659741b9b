import Foundation
import SavingsRPC

/// The fast path that would close `daemon.ping`'s one-CPU gap, tried on its own
/// (`savings-bench --blocking-ping SOCKET`): no event loop, a blocking accept loop on a thread of
/// its own and a thread per connection, reading with read(2) as the C echo does, each line
/// answered by the dispatcher's immediate path (`RPCDispatcher.handleImmediately`, what savingsd's
/// `ImmediateAnswers` calls) with savingsd's `daemon.ping` handler. What it does not do is what
/// savingsd would still need around it: peer credentials, admission, handing a connection's
/// first other line (and everything after) to the SwiftNIO pipeline, a cap on threads.
func runBlockingPing(socket path: String) throws -> Never {
    var registry = MethodRegistry()
    registry.registerImmediate(MethodSpec("daemon.ping", summary: "Check that the daemon answers.",
                                          result: ResultSpec("pong", "{\"pong\": true}", schema: ["type": "object"]), writes: false)) { _ in
        ["pong": true]
    }
    let dispatcher = RPCDispatcher(registry: registry, maxBatch: 100)
    signal(SIGPIPE, SIG_IGN)
    let listener = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard listener >= 0, bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw BenchError("cannot listen on \(path)") }
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes + [0]) }
    unlink(path)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard bound == 0, listen(listener, 128) == 0 else { throw BenchError("cannot listen on \(path): \(String(cString: strerror(errno)))") }
    FileHandle.standardOutput.write(Data("ready\n".utf8))
    while true {
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else {
            if errno == EINTR { continue }
            exit(1)
        }
        _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
        Thread.detachNewThread { serveBlocking(connection, dispatcher) }
    }
}

/// One connection: every complete line answered in order, by the immediate path or, for a line
/// it does not take, an error (the prototype has nothing behind it).
private func serveBlocking(_ connection: Int32, _ dispatcher: RPCDispatcher) {
    defer { close(connection) }
    var buffer = [UInt8](repeating: 0, count: 65_536)
    var held = 0
    var out: [UInt8] = []
    let refused = Array(#"{"error":{"code":-32601,"message":"not on the fast path"},"id":null,"jsonrpc":"2.0"}"#.utf8)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(connection, $0.baseAddress! + held, $0.count - held) }
        guard count > 0 else { return }
        held += count
        guard let last = buffer[..<held].lastIndex(of: UInt8(ascii: "\n")) else {
            if held == buffer.count { return }
            continue
        }
        out.removeAll(keepingCapacity: true)
        buffer.withUnsafeBytes { all in
            var start = 0
            while start <= last, let end = all[start...last].firstIndex(of: UInt8(ascii: "\n")) {
                out += dispatcher.handleImmediately(line: UnsafeRawBufferPointer(rebasing: all[start..<end])) ?? refused
                out.append(UInt8(ascii: "\n"))
                start = end + 1
            }
        }
        var sent = 0
        while sent < out.count {
            let written = out.withUnsafeBytes { write(connection, $0.baseAddress! + sent, $0.count - sent) }
            guard written > 0 else { return }
            sent += written
        }
        buffer.withUnsafeMutableBytes { all in
            all.baseAddress!.copyMemory(from: all.baseAddress! + last + 1, byteCount: held - last - 1)
        }
        held -= last + 1
    }
}
