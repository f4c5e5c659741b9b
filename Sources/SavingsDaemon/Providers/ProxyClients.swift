import AsyncHTTPClient
import Foundation
import Logging
import NIOPosix

/// HTTP clients that go through a configured proxy, one per proxy, made when first needed and
/// shut down with the daemon (block explorers and linked accounts may each name one).
actor ProxyClients {
    private let logger: Logger
    private var clients: [String: HTTPClient] = [:]

    init(logger: Logger) { self.logger = logger }

    /// `http` itself without a proxy, else the client for `proxy`, each limited to `maxBody`.
    func http(_ http: ProviderHTTP, proxy: String?, maxBody: Int) throws -> ProviderHTTP {
        guard let proxy, http.client != nil else { return http.limited(to: maxBody) }
        if let known = clients[proxy] { return ProviderHTTP(client: known, maxBody: maxBody) }
        guard let url = URL(string: proxy), let host = url.host, let port = url.port else {
            throw ProviderFailure("the proxy '\(proxy)' is not host:port")
        }
        var configuration = ProviderHTTP.configuration
        configuration.proxy = url.scheme?.hasPrefix("socks") == true ? .socksServer(host: host, port: port) : .server(host: host, port: port)
        let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration, backgroundActivityLogger: logger)
        clients[proxy] = client
        return ProviderHTTP(client: client, maxBody: maxBody)
    }

    func shutdown() async {
        for client in clients.values { try? await client.shutdown() }
        clients = [:]
    }
}
