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
