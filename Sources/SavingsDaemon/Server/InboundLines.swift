import NIOCore
import Synchronization

/// The lines of one connection, read by one task at a time: the connection's loop between
/// requests, or the request it is awaiting (an upload's chunks). The loop does not read while
/// it awaits the request, so the iterator is never used concurrently.
final class InboundLines<Iterator: AsyncIteratorProtocol>: @unchecked Sendable where Iterator.Element == ByteBuffer {
    private var iterator: Iterator
    private let maxLineBytes: @Sendable () -> Int

    init(_ iterator: Iterator, maxLineBytes: @escaping @Sendable () -> Int) {
        self.iterator = iterator
        self.maxLineBytes = maxLineBytes
    }

    func next() async throws -> ByteBuffer? {
        guard let frame = try await iterator.next() else { return nil }
        // A whole over-long line can arrive in one read, before the decoder's buffer limit
        // applies: the limit is checked on every line too.
        if frame.readableBytes > maxLineBytes() { throw LineTooLong() }
        return frame
    }
}

/// Set by a request after which the connection must close (an upload that failed half-way).
final class ConnectionEnding: Sendable {
    private let state = Atomic<Bool>(false)

    func set() { state.store(true, ordering: .relaxed) }
    var isSet: Bool { state.load(ordering: .relaxed) }
}
