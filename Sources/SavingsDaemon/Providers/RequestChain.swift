import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Requests that must reach a service one after another (Kraken wants a key's nonces in
/// order), sent back to back: each is made and sent on one event loop as soon as the answer
/// before it has arrived, while the caller reads the answers at its own pace. At most
/// `ahead` answers wait unread: past that no request goes out until one is read, so memory
/// stays bounded whatever the caller's speed.
final class RequestChain: Sendable {
    /// Makes the `index`-th request (signing it now, so its nonce is the newest), or nil when
    /// there is no more; called on the chain's event loop, one index after another.
    typealias Maker = @Sendable (_ index: Int) throws -> (url: String, method: HTTPMethod, headers: [(String, String)], body: [UInt8])?

    private struct State {
        var answers: [Result<ServiceAnswer, any Error>] = []
        var waiting: CheckedContinuation<[ServiceAnswer], any Error>?
        var next = 0
        var inFlight = false
        var finished = false
        var cancelled = false
        var task: HTTPClient.Task<HTTPClient.Response>?
    }

    private let client: HTTPClient
    private let loop: any EventLoop
    private let maxBody: Int
    private let ahead: Int
    private let make: Maker
    private let state = NIOLockedValueBox(State())

    init(client: HTTPClient, maxBody: Int, ahead: Int = 16, make: @escaping Maker) {
        self.client = client
        loop = client.eventLoopGroup.next()
        self.maxBody = maxBody
        self.ahead = ahead
        self.make = make
        loop.execute { self.sendIfRoom() }
    }

    /// The answers that have arrived, in order, waiting for at least one; none after the last.
    /// A failure ends the chain: it is thrown once the answers before it are taken.
    func next() async throws -> [ServiceAnswer] {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[ServiceAnswer], any Error>) in
                let ready: Result<[ServiceAnswer], any Error>? = state.withLockedValue { state in
                    if !state.answers.isEmpty { return Self.drain(&state.answers) }
                    if state.finished && !state.inFlight || state.cancelled { return .success([]) }
                    state.waiting = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
                loop.execute { self.sendIfRoom() }
            }
        } onCancel: {
            cancel()
        }
    }

    /// The answers before the first failure, or that failure when it comes first.
    private static func drain(_ answers: inout [Result<ServiceAnswer, any Error>]) -> Result<[ServiceAnswer], any Error> {
        var taken: [ServiceAnswer] = []
        while let first = answers.first {
            switch first {
            case .success(let answer):
                taken.append(answer)
                answers.removeFirst()
            case .failure(let error):
                if taken.isEmpty {
                    answers.removeFirst()
                    return .failure(error)
                }
                return .success(taken)
            }
        }
        return .success(taken)
    }

    /// Stops the chain: the request in flight is cancelled, nothing more is sent.
    func cancel() {
        let (task, waiting): (HTTPClient.Task<HTTPClient.Response>?, CheckedContinuation<[ServiceAnswer], any Error>?) = state.withLockedValue { state in
            state.cancelled = true
            defer { state.waiting = nil }
            return (state.task, state.waiting)
        }
        task?.cancel()
        waiting?.resume(throwing: CancellationError())
    }

    /// On the loop: sends the next request when none is in flight and there is room.
    private func sendIfRoom() {
        let index: Int? = state.withLockedValue { state in
            guard !state.inFlight, !state.finished, !state.cancelled, state.answers.count < ahead else { return nil }
            state.inFlight = true
            defer { state.next += 1 }
            return state.next
        }
        guard let index else { return }
        do {
            guard let made = try make(index) else {
                deliver(nil, finished: true)
                return
            }
            var request = try HTTPClient.Request(url: made.url, method: made.method)
            request.headers.add(name: "Accept", value: "application/json")
            request.headers.add(name: "User-Agent", value: "savingsd")
            for (name, value) in made.headers { request.headers.add(name: name, value: value) }
            request.body = .bytes(made.body)
            let task = client.execute(request: request, delegate: ResponseAccumulator(request: request, maxBodySize: maxBody),
                                      eventLoop: .delegateAndChannel(on: loop),
                                      deadline: .now() + ProviderHTTP.answerTimeout)
            state.withLockedValue { $0.task = task }
            task.futureResult.hop(to: loop).whenComplete { result in
                switch result {
                case .success(let response):
                    self.deliver(.success(ServiceAnswer(status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) },
                                                        body: response.body.map { Array($0.readableBytesView) } ?? [])), finished: false)
                case .failure(let error):
                    let failure: any Error = error is ResponseAccumulator.ResponseTooBigError
                        ? ProviderFailure("the answer is larger than \(self.maxBody) bytes")
                        : ProviderFailure("the request to \(URL(string: made.url)?.host ?? "the service") failed (\(ProviderHTTP.reason(error)))")
                    self.deliver(.failure(failure), finished: true)
                }
            }
        } catch {
            deliver(.failure(error), finished: true)
        }
    }

    /// On the loop: an answer arrived (or the chain ended); the caller is given it, and the
    /// next request goes out at once.
    private func deliver(_ result: Result<ServiceAnswer, any Error>?, finished: Bool) {
        let (waiting, taken): (CheckedContinuation<[ServiceAnswer], any Error>?, Result<[ServiceAnswer], any Error>) = state.withLockedValue { state in
            state.inFlight = false
            state.task = nil
            if finished { state.finished = true }
            if let result { state.answers.append(result) }
            guard let waiting = state.waiting else { return (nil, .success([])) }
            state.waiting = nil
            return (waiting, Self.drain(&state.answers))
        }
        waiting?.resume(with: taken)
        sendIfRoom()
    }
}
