import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The web view on the benchmark's database: the dashboard page (the whole request, by a client
/// on loopback, as a browser asks for it with its cookie) against `dashboard.get` over the
/// socket, alternating; and how long a write over the socket takes to reach an open page's
/// event stream (from sending the write to the event arriving).
func webFigures(socket: String, savingsWeb: String, runs: Int) throws -> [Figure] {
    let server = Process()
    let output = Pipe()
    server.executableURL = URL(fileURLWithPath: savingsWeb)
    server.arguments = ["--socket", socket, "--listen", "127.0.0.1:0"]
    server.standardOutput = output
    server.standardError = FileHandle.nullDevice
    try Children.run(server)
    defer {
        server.terminate()
        server.waitUntilExit()
    }
    var line: [UInt8] = []
    while let byte = output.fileHandleForReading.readData(ofLength: 1).first, byte != 0x0A { line.append(byte) }
    let url = String(decoding: line, as: UTF8.self)
    guard let match = url.firstMatch(of: /^http:\/\/127\.0\.0\.1:(\d+)(\/\?token=[0-9a-f]+)$/), let port = Int(match.1) else {
        throw BenchError("savings-web printed '\(url)'")
    }
    let signIn = try HTTPExchange(port: port).send("GET \(match.2) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n", until: "\r\n\r\n")
    guard let cookie = signIn.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("set-cookie:") })?
        .dropFirst("set-cookie:".count).split(separator: ";").first?.trimmingCharacters(in: .whitespaces) else {
        throw BenchError("no session cookie from savings-web: \(signIn.prefix(300))")
    }
    let page = "GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nCookie: \(cookie)\r\n\r\n"
    let connection = try LineSocket(path: socket)
    let dashboard = request("dashboard.get")
    var pageSamples = Samples(), callSamples = Samples()
    for index in 0..<(runs + 3) {
        let html = try HTTPExchange(port: port)
        let started = monotonicSeconds()
        let answer = try html.send(page, until: "</html>")
        let took = monotonicSeconds() - started
        guard answer.hasPrefix("HTTP/1.1 200") else { throw BenchError("the dashboard page: \(answer.prefix(300))") }
        let call = monotonicSeconds()
        try connection.roundTrip(dashboard)
        let callTook = monotonicSeconds() - call
        // The first rounds warm both up.
        if index >= 3 {
            pageSamples.add(took)
            callSamples.add(callTook)
        }
    }

    // Event to page: an open stream, a write over the socket, the event's arrival.
    let stream = try HTTPExchange(port: port)
    _ = try stream.send("GET /events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nCookie: \(cookie)\r\n\r\n", until: "event: live")
    let write = request("tx.add", #"{"asset":"Asset 2","amount":"0.01","note":"web bench"}"#)
    var latency = Samples()
    for _ in 0..<runs {
        let started = monotonicSeconds()
        try connection.roundTrip(write)
        _ = try stream.read(until: "event: change")
        latency.add(monotonicSeconds() - started)
    }
    return [
        Figure(name: "web view: the dashboard page (`GET /`, whole request on loopback, server-rendered from `dashboard.get` over a new socket connection)",
               median: ms(pageSamples.median), p99: ms(pageSamples.p99),
               baseline: "`dashboard.get` over the socket, alternating: " + ms(callSamples.median),
               ratio: ratio(pageSamples.median / callSamples.median), target: "≤ 1.5×", met: pageSamples.median / callSamples.median <= 1.5),
        Figure(name: "web view: a write over the socket (`tx.add`) reaching an open page's event stream (from sending the write)",
               median: ms(latency.median), p99: ms(latency.p99), baseline: "—", ratio: "—", target: "p50 ≤ 100 ms",
               met: latency.median <= 0.1),
    ]
}

/// One HTTP/1.1 connection to loopback, read as text.
final class HTTPExchange {
    private let fd: Int32
    private var received: [UInt8] = []

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket()") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw BenchError("cannot connect to 127.0.0.1:\(port)")
        }
    }

    deinit { close(fd) }

    /// Sends `text` and reads until `marker` has arrived; what arrived.
    func send(_ text: String, until marker: String) throws -> String {
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == bytes.count else { throw BenchError("write failed") }
        return try read(until: marker)
    }

    /// Reads until `marker` has arrived (within 10 s) and returns what arrived, which is then forgotten.
    func read(until marker: String) throws -> String {
        let wanted = Array(marker.utf8)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let deadline = monotonicSeconds() + 10
        var searched = 0
        while !contains(received, wanted, from: max(0, searched - wanted.count)) {
            searched = received.count
            guard monotonicSeconds() < deadline else { throw BenchError("no '\(marker)' within 10 s") }
            let count = Glibc.read(fd, &buffer, buffer.count)
            guard count > 0 else { throw BenchError("the connection ended before '\(marker)'") }
            received += buffer[0..<count]
        }
        defer { received = [] }
        return String(decoding: received, as: UTF8.self)
    }

    /// Whether `needle` is in `haystack` at or after `start` (what arrived last, with the
    /// marker's length before it).
    private func contains(_ haystack: [UInt8], _ needle: [UInt8], from start: Int) -> Bool {
        guard haystack.count >= needle.count, start <= haystack.count - needle.count else { return false }
        return (start...(haystack.count - needle.count)).contains { offset in
            haystack[offset] == needle[0] && haystack[offset..<offset + needle.count].elementsEqual(needle)
        }
    }
}
