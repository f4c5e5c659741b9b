import Testing
@testable import SavingsWeb

/// The bound on open event streams: the oldest closes when one more opens.
@Suite struct EventStreamsTests {
    /// A page and everything queued for it, once it has closed.
    func page() -> (EventPage, AsyncStream<String>) {
        let (queue, continuation) = AsyncStream<String>.makeStream()
        return (EventPage(continuation), queue)
    }

    func received(_ queue: AsyncStream<String>) async -> [String] {
        var texts: [String] = []
        for await text in queue { texts.append(text) }
        return texts
    }

    @Test func theOldestStreamsOfASessionCloseBeyondItsBound() async {
        let streams = EventStreams(perSession: 3, total: 5)
        let pages = (0..<5).map { _ in page() }
        let ids = pages.map { streams.open($0.0, session: "a") }
        #expect(streams.count == 3)
        for (page, queue) in pages.prefix(2) {
            #expect(!page.open)
            #expect(await received(queue) == ["event: closed\ndata: {}\n\n"], "told to stop following")
        }
        #expect(pages.suffix(3).allSatisfy { $0.0.open })
        // Another session's streams count apart, up to the total.
        let others = (0..<3).map { _ in page() }
        for other in others { _ = streams.open(other.0, session: "b") }
        #expect(streams.count == 5)
        #expect(!pages[2].0.open, "the oldest of all closes past the total")
        #expect(others.allSatisfy { $0.0.open } && pages[3].0.open && pages[4].0.open)
        // A stream that ends leaves room.
        streams.closed(ids[4])
        #expect(streams.count == 4)
    }
}
