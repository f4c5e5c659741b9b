import AsyncAlgorithms
import NIOConcurrencyHelpers
import NIOCore
import SavingsRPC

/// A few connections to savingsd kept open between calls that only read: each call is a line
/// to whichever connection is free, its answer the next line with an id. A connection the
/// daemon has closed meanwhile (its idle timeout) is noticed when a call finds it closed before
/// any answer: that call goes once more on a new connection, which is safe because it only
/// reads. A connection is made when a call needs one, never in advance, and none is made while
/// savingsd is down.
final class KeptConnections: Sendable {
    /// The most connections kept.
    static let size = 2

    struct Call: Sendable {
        let line: ByteBuffer
        let method: String
        let answer: OneShot<DaemonLink.Answer>
    }

    private let calls = AsyncChannel<Call>()
    private let workers = NIOLockedValueBox(false)

    func answer(_ line: ByteBuffer, method: String, link: DaemonLink) async throws(DaemonLink.Failure) -> DaemonLink.Answer {
        let started = workers.withLockedValue { started in
            defer { started = true }
            return started
        }
        if !started {
            for _ in 0..<Self.size { Task { await self.work(link) } }
        }
        let call = Call(line: line, method: method, answer: OneShot())
        // Cancelled (the page gone) while no connection is free, the call may never reach one:
        // it is answered with that, and a late answer is dropped (the first told wins).
        return try await withTaskCancellationHandler {
            await calls.send(call)
            return await call.answer.value
        } onCancel: {
            call.answer.resume(.failure(.unreachable("the page was closed before savingsd answered")))
        }.get()
    }

    /// One kept connection's life: waits for a call, connects, and answers calls on that
    /// connection until it fails; then waits for the next call.
    private func work(_ link: DaemonLink) async {
        var waiting = calls.makeAsyncIterator()
        while let first = await waiting.next() {
            var call: Call? = first
            var retried = false
            while let current = call {
                do {
                    let channel = try await link.connect()
                    call = nil
                    var served = 0
                    do {
                        try await channel.executeThenClose { inbound, outbound in
                            var lines = inbound.makeAsyncIterator()
                            var next: Call? = current
                            while let serving = next {
                                call = serving
                                try await outbound.write(serving.line)
                                serving.answer.resume(.success(try await Self.answer(&lines, method: serving.method)))
                                call = nil
                                served += 1
                                retried = false
                                next = await waiting.next()
                            }
                        }
                    } catch {
                        // A call on a connection that had served before, failed before its
                        // answer: the daemon closed the idle connection; once more on a new one.
                        guard let failed = call else { continue }
                        if served > 0, !retried {
                            retried = true
                            continue
                        }
                        failed.answer.resume(.failure(DaemonLink.Failure.of(error)))
                        call = nil
                    }
                } catch {
                    current.answer.resume(.failure(error))
                    call = nil
                }
            }
        }
    }

    /// The next line with an id (notifications skipped), as an answer.
    private static func answer(_ lines: inout NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator,
                               method: String) async throws -> DaemonLink.Answer {
        while let line = try await lines.next() {
            let bytes = Array(buffer: line)
            guard let members = JSONParser.members(of: bytes) else {
                throw DaemonLink.Failure.unreachable("an answer to \(method) that is not a JSON object")
            }
            if members.contains(where: { $0.key == "id" }) { return DaemonLink.Answer(bytes: bytes, members: members) }
        }
        throw DaemonLink.Failure.unreachable("the connection ended before the answer to \(method)")
    }
}

/// A value told once (a call's answer, a download's size or why it did not start), awaited
/// by one.
final class OneShot<Value: Sendable>: Sendable {
    private let state = NIOLockedValueBox<(outcome: Result<Value, DaemonLink.Failure>?,
                                           waiter: CheckedContinuation<Result<Value, DaemonLink.Failure>, Never>?)>((nil, nil))

    /// Tells the outcome; false when it was told before.
    @discardableResult
    func resume(_ outcome: Result<Value, DaemonLink.Failure>) -> Bool {
        let (told, waiter) = state.withLockedValue { state -> (Bool, CheckedContinuation<Result<Value, DaemonLink.Failure>, Never>?) in
            guard state.outcome == nil else { return (false, nil) }
            state.outcome = outcome
            defer { state.waiter = nil }
            return (true, state.waiter)
        }
        waiter?.resume(returning: outcome)
        return told
    }

    var value: Result<Value, DaemonLink.Failure> {
        get async {
            await withCheckedContinuation { continuation in
                let outcome = state.withLockedValue { state -> Result<Value, DaemonLink.Failure>? in
                    if state.outcome == nil { state.waiter = continuation }
                    return state.outcome
                }
                if let outcome { continuation.resume(returning: outcome) }
            }
        }
    }
}
