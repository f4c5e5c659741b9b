import Foundation
import NIOConcurrencyHelpers
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP proxy on loopback that tunnels (`CONNECT host:port`, RFC 9110 9.3.6) to one fixed
/// loopback port whatever host is named, and remembers the hosts asked for: a client configured
/// with it reaches a stub under a name that does not resolve, which only a proxy can do.
final class ConnectProxy: Sendable {
    private let listener: Int32
    let port: Int
    private let asked = NIOLockedValueBox<[String]>([])
    var targets: [String] { asked.withLockedValue { $0 } }

    init(forwardingTo target: Int) throws {
        let (listener, port) = try listenOnLoopback()
        self.listener = listener
        self.port = port
        let asked = asked
        Thread.detachNewThread {
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                Thread.detachNewThread { Self.tunnel(client, to: target, asked: asked) }
            }
        }
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private static func tunnel(_ client: Int32, to target: Int, asked: NIOLockedValueBox<[String]>) {
        var head: [UInt8] = []
        var byte: UInt8 = 0
        while !head.suffix(4).elementsEqual("\r\n\r\n".utf8), read(client, &byte, 1) == 1 { head.append(byte) }
        let request = String(decoding: head, as: UTF8.self)
        guard request.hasPrefix("CONNECT "), let host = request.split(separator: " ").dropFirst().first else {
            _ = "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n".withCString { write(client, $0, strlen($0)) }
            close(client)
            return
        }
        asked.withLockedValue { $0.append(String(host)) }
        let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(target).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(client)
            close(upstream)
            return
        }
        _ = "HTTP/1.1 200 Connection established\r\n\r\n".withCString { write(client, $0, strlen($0)) }
        @Sendable func pump(_ from: Int32, _ to: Int32) {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = read(from, &buffer, buffer.count)
                guard count > 0, write(to, buffer, count) == count else { break }
            }
            shutdown(to, Int32(SHUT_WR))
        }
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            pump(upstream, client)
            done.signal()
        }
        pump(client, upstream)
        done.wait()
        close(client)
        close(upstream)
    }
}

/// A TCP socket listening on 127.0.0.1 at a port of the kernel's choosing.
func listenOnLoopback() throws -> (descriptor: Int32, port: Int) {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) } }
    guard bound == 0, listen(listener, 16) == 0 else {
        close(listener)
        throw HarnessError("cannot listen on loopback")
    }
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
    return (listener, Int(UInt16(bigEndian: address.sin_port)))
}

/// A TCP connection to 127.0.0.1:`port`.
func connectOnLoopback(port: Int) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw HarnessError("socket()") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else {
        close(fd)
        throw HarnessError("connect to port \(port) failed")
    }
    return fd
}
