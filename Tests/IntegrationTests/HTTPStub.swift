import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A loopback HTTP server standing in for the rate services: the test decides every answer and
/// sees every request (path, query, headers) in the order it arrived.
final class HTTPStub: Sendable {
    struct Request: Sendable {
        var path: String
        var query: [String: String]
        var headers: [String: String]
        var at: Date
        /// The query as it came, still encoded and in order (what a signature covers).
        var rawQuery = ""
        var method = "GET"
        /// The request's body as text (a signed form, a JSON document).
        var body = ""
    }

    struct Response: Sendable {
        var status: Int
        var headers: [(String, String)] = []
        var body: String

        static func json(_ body: String) -> Response { Response(status: 200, headers: [("Content-Type", "application/json")], body: body) }
    }

    typealias Responder = @Sendable (Request) -> Response

    private let state: NIOLockedValueBox<(responder: Responder, requests: [Request])>
    private let channel: any Channel
    var port: Int { channel.localAddress?.port ?? 0 }
    var baseURL: String { "http://127.0.0.1:\(port)" }

    init(_ responder: @escaping Responder) throws {
        let state = NIOLockedValueBox<(responder: Responder, requests: [Request])>((responder, []))
        self.state = state
        channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(state: state))
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
    }

    /// Closed where it is let go. That may be on an event loop: a stub whose test has ended
    /// while the daemon's request was being answered is let go by that answer, and waiting on
    /// an event loop is forbidden there (it crashed a run of HostileExplorerTests).
    deinit {
        if MultiThreadedEventLoopGroup.currentEventLoop != nil {
            channel.close(promise: nil)
        } else {
            try? channel.close().wait()
        }
    }

    func respond(_ responder: @escaping Responder) { state.withLockedValue { $0.responder = responder } }
    var requests: [Request] { state.withLockedValue { $0.requests } }
    func requests(to path: String) -> [Request] { requests.filter { $0.path.hasSuffix(path) } }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let state: NIOLockedValueBox<(responder: Responder, requests: [Request])>
        private var head: HTTPRequestHead?
        private var body = ByteBuffer()

        init(state: NIOLockedValueBox<(responder: Responder, requests: [Request])>) { self.state = state }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let requestHead):
                head = requestHead
                body.clear()
            case .body(var part): body.writeBuffer(&part)
            case .end:
                guard let requestHead = head else { return }
                let components = URLComponents(string: requestHead.uri)
                var query: [String: String] = [:]
                for item in components?.queryItems ?? [] { query[item.name] = item.value ?? "" }
                var headers: [String: String] = [:]
                for (name, value) in requestHead.headers { headers[name.lowercased()] = value }
                let request = Request(path: components?.path ?? requestHead.uri, query: query, headers: headers, at: Date(),
                                      rawQuery: components?.percentEncodedQuery ?? "", method: requestHead.method.rawValue,
                                      body: String(buffer: body))
                let responder = state.withLockedValue { state in
                    state.requests.append(request)
                    return state.responder
                }
                let response = responder(request)
                var responseHeaders = HTTPHeaders(response.headers)
                responseHeaders.replaceOrAdd(name: "Content-Length", value: String(response.body.utf8.count))
                responseHeaders.replaceOrAdd(name: "Connection", value: "close")
                let status = HTTPResponseStatus(statusCode: response.status)
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: requestHead.version, status: status, headers: responseHeaders))),
                              promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: response.body)))), promise: nil)
                let channel = context.channel
                context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
            }
        }
    }
}
