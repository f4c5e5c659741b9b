import Foundation
import NIOCore
import NIOExtras
import NIOPosix

/// The least a SwiftNIO server does per line: its event loop, the line decoder savingsd uses,
/// and a write of the line back (`savings-bench --nio-echo SOCKET`). Beside the C echo it shows
/// how much of `daemon.ping`'s one-CPU round trip is the event-loop design itself and how much
/// is savingsd's own work on top.
final class LineEcho: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var line = unwrapInboundIn(data)
        line.writeInteger(UInt8(ascii: "\n"))
        context.writeAndFlush(wrapOutboundOut(line), promise: nil)
    }
}

func runNIOEcho(socket: String) throws -> Never {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let channel = try ServerBootstrap(group: group)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineBasedFrameDecoder()))
                try channel.pipeline.syncOperations.addHandler(LineEcho())
            }
        }
        .bind(unixDomainSocketPath: socket, cleanupExistingSocketFile: true).wait()
    FileHandle.standardOutput.write(Data("ready\n".utf8))
    try channel.closeFuture.wait()
    exit(0)
}

/// Starts a line server that says "ready" on its standard output once it listens (the C echo,
/// the SwiftNIO echo), as a child stopped with the benchmark.
func startLineServer(_ executable: String, _ arguments: [String]) throws -> Process {
    let server = Process()
    server.executableURL = URL(fileURLWithPath: executable)
    server.arguments = arguments
    let output = Pipe()
    server.standardOutput = output
    try Children.run(server)
    _ = output.fileHandleForReading.availableData  // "ready"
    return server
}

/// The SwiftNIO line echo against the C echo, `daemon.ping` against the SwiftNIO echo, and
/// `daemon.ping` from blocking threads (the fast path tried alone, `BlockingPing.swift`) against
/// the C echo: the four servers and this thread on the first CPU, in alternating rounds of
/// `runs` round trips.
func nioFloorFigures(savingsBench: String, work: String, echo: (pid: pid_t, socket: LineSocket),
                     daemon: (pid: pid_t, socket: LineSocket), line: [UInt8], rounds: Int, runs: Int,
                     cpus: [Int]) throws -> [Figure] {
    let nioEcho = try startLineServer(savingsBench, ["--nio-echo", work + "/nio-echo.sock"])
    defer { nioEcho.terminate() }
    let blocking = try startLineServer(savingsBench, ["--blocking-ping", work + "/blocking-ping.sock"])
    defer { blocking.terminate() }
    for process in [echo.pid, nioEcho.processIdentifier, blocking.processIdentifier, daemon.pid] { try Placement.pin(process: process, to: [cpus[0]]) }
    try Placement.pin(thread: 0, to: [cpus[0]])
    // Connected once pinned: the blocking server's thread for the connection starts at accept,
    // from its pinned accept loop (one started before could miss the pinning).
    let nioSocket = try LineSocket(path: work + "/nio-echo.sock"), blockingSocket = try LineSocket(path: work + "/blocking-ping.sock")
    defer {
        for process in [echo.pid, daemon.pid] { try? Placement.pin(process: process, to: cpus) }
        try? Placement.pin(thread: 0, to: cpus)
    }
    var cSamples = Samples(), nioSamples = Samples(), pingSamples = Samples(), blockingSamples = Samples()
    for _ in 0..<rounds {
        cSamples.values += try measure(echo.socket, line, runs: runs, warmup: 100).values
        nioSamples.values += try measure(nioSocket, line, runs: runs, warmup: 100).values
        pingSamples.values += try measure(daemon.socket, line, runs: runs, warmup: 100).values
        blockingSamples.values += try measure(blockingSocket, line, runs: runs, warmup: 100).values
    }
    return [
        Figure(name: "a SwiftNIO line echo (event loop, line decoder, write), one connection, sequential, client and server on one CPU (p50)",
               median: ms(nioSamples.median), p99: ms(nioSamples.p99), baseline: "line echo (C): " + ms(cSamples.median),
               ratio: ratio(nioSamples.median / cSamples.median), target: "—", met: nil),
        Figure(name: "`daemon.ping` against that SwiftNIO line echo, on one CPU (p50)", median: ms(pingSamples.median), p99: ms(pingSamples.p99),
               baseline: "SwiftNIO line echo: " + ms(nioSamples.median), ratio: ratio(pingSamples.median / nioSamples.median),
               target: "—", met: nil),
        Figure(name: "`daemon.ping` from blocking threads (a prototype of the fast path, not savingsd: accept loop and a thread per connection, savingsd's immediate answer), on one CPU (p50)",
               median: ms(blockingSamples.median), p99: ms(blockingSamples.p99), baseline: "line echo (C): " + ms(cSamples.median),
               ratio: ratio(blockingSamples.median / cSamples.median), target: "—", met: nil),
    ]
}

/// `savings-bench --one-cpu`: the one-CPU round trips alone (the C echo, the SwiftNIO echo,
/// `daemon.ping` on a fresh daemon, the blocking prototype), for profiling by hand.
func oneCPUFigures(work: String, binaries: String, runs: Int) throws -> [Figure] {
    try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
    let echo = try startLineServer(binaries + "/bench-echo", [work + "/echo.sock"])
    defer { echo.terminate() }
    let daemon = try DaemonUnderTest(executable: binaries + "/savingsd", directory: work, database: work + "/savings.db")
    defer { daemon.stop() }
    let line = request("daemon.ping")
    return try nioFloorFigures(savingsBench: binaries + "/savings-bench", work: work,
                               echo: (echo.processIdentifier, try LineSocket(path: work + "/echo.sock")),
                               daemon: (daemon.process.processIdentifier, try LineSocket(path: daemon.socket)),
                               line: line, rounds: 5, runs: runs, cpus: Placement.allowedCPUs)
}
