import SavingsCore

/// Turns one inbound line into at most one outbound line, per JSON-RPC 2.0: single calls,
/// notifications, batches and every error case. Never throws; never leaks internals.
public struct RPCDispatcher: Sendable {
    public let registry: MethodRegistry
    public let maxBatch: Int
    private let onInternalError: @Sendable (String, any Error) -> Void
    private let onWrite: @Sendable (String) -> Void
    /// `"name"` of each immediate method, as bytes: lines without one are not parsed twice.
    private let immediateNeedles: [[UInt8]]
    /// Longest line tried on the immediate path.
    public static let immediateLineLimit = 4_096
    /// Longest silence of a call that asked for `progress` (see `ProgressPulse`).
    public var progressInterval: Duration = .seconds(2)

    /// `onWrite` runs after every successful call of a method that writes.
    public init(registry: MethodRegistry, maxBatch: Int = 100,
                onInternalError: @escaping @Sendable (_ method: String, _ error: any Error) -> Void = { _, _ in },
                onWrite: @escaping @Sendable (_ method: String) -> Void = { _ in }) {
        self.registry = registry
        self.maxBatch = maxBatch
        self.onInternalError = onInternalError
        self.onWrite = onWrite
        immediateNeedles = registry.immediateNames.map { Array("\"\($0)\"".utf8) }
    }

    /// Answers `line` at once when it is one request for an immediate method (with an id),
    /// exactly as `handle(line:context:)` would; nil for anything else, which the caller then
    /// hands to `handle(line:context:)`.
    public func handleImmediately(line: UnsafeRawBufferPointer) -> [UInt8]? {
        guard !immediateNeedles.isEmpty, line.count <= Self.immediateLineLimit else { return nil }
        // The plain form of a call (what a health check sends) is read without building its
        // JSON value, and its answer written without building the envelope's.
        if let plain = PlainRequest.scan(line) {
            guard let (spec, handler) = registry.immediate(plain.method) else { return nil }
            let id = line[plain.id]
            do {
                return Self.success(id: id, result: try handler(try registry.validate([:], for: spec)))
            } catch {
                let requestID: RequestID = id.first == UInt8(ascii: "\"")
                    ? .string(String(decoding: id.dropFirst().dropLast(), as: UTF8.self))
                    : .number(String(decoding: id, as: UTF8.self))
                return JSONSerializer.bytes(RPCResponse.failure(id: requestID, error: failure(plain.method, error)))
            }
        }
        guard line.first(where: { $0 != 0x20 && $0 != 0x09 }) == UInt8(ascii: "{"),
              immediateNeedles.contains(where: { Self.contains(line, $0) })
        else { return nil }
        let bytes = Array(line)
        guard let value = try? JSONParser.parse(bytes), case .success(let request) = RPCRequest.decode(value),
              let id = request.id, let (spec, handler) = registry.immediate(request.method)
        else { return nil }
        let response: JSONValue
        do {
            response = RPCResponse.success(id: id, result: try handler(try registry.validate(request.params, for: spec)))
        } catch {
            response = RPCResponse.failure(id: id, error: failure(request.method, error))
        }
        return JSONSerializer.bytes(response)
    }

    public func handleImmediately(line: [UInt8]) -> [UInt8]? {
        line.withUnsafeBytes { handleImmediately(line: $0) }
    }

    /// `RPCResponse.success(id:result:)` serialized, for an id already in JSON form: the
    /// members in the serializer's (sorted) order.
    static func success(id: Slice<UnsafeRawBufferPointer>, result: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 + id.count + JSONSerializer.estimatedCount(result))
        out.append(contentsOf: #"{"id":"#.utf8)
        out.append(contentsOf: id)
        out.append(contentsOf: #","jsonrpc":"2.0","result":"#.utf8)
        JSONSerializer.write(result, to: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    static func contains(_ haystack: UnsafeRawBufferPointer, _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        var start = 0
        while start + needle.count <= haystack.count {
            guard let first = haystack[start...].firstIndex(of: needle[0]), first + needle.count <= haystack.count else { return false }
            if haystack[first..<first + needle.count].elementsEqual(needle) { return true }
            start = first + 1
        }
        return false
    }

    /// Handles one line; returns the response line (without the newline) or nil when nothing
    /// is to be sent (notifications, blank lines).
    public func handle(line: [UInt8], context: CallContext) async -> [UInt8]? {
        var bytes = line[...]
        while let last = bytes.last, last == 0x0D || last == 0x20 || last == 0x09 { bytes = bytes.dropLast() }
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return nil }
        let value: JSONValue
        do {
            value = try JSONParser.parse(Array(bytes))
        } catch {
            return JSONSerializer.bytes(RPCResponse.failure(id: .null, error: .parseError(error.description)))
        }
        guard let response = await handle(value: value, context: context) else { return nil }
        return JSONSerializer.bytes(response)
    }

    /// Handles a parsed request or batch.
    public func handle(value: JSONValue, context: CallContext) async -> JSONValue? {
        guard case .array(let batch) = value else {
            return await handleSingle(value, context: context, alone: true)
        }
        if batch.isEmpty {
            return RPCResponse.failure(id: .null, error: .invalidRequest("an empty batch is not a request"))
        }
        if batch.count > maxBatch {
            return RPCResponse.failure(id: .null, error: .invalidRequest("a batch may hold at most \(maxBatch) requests (got \(batch.count))"))
        }
        var responses: [JSONValue] = []
        for element in batch {
            if let response = await handleSingle(element, context: context, alone: false) { responses.append(response) }
        }
        return responses.isEmpty ? nil : .array(responses)
    }

    /// `alone`: the request is the whole line, so it may carry a file (see `FileTransfer`).
    private func handleSingle(_ value: JSONValue, context: CallContext, alone: Bool) async -> JSONValue? {
        switch RPCRequest.decode(value) {
        case .failure(let failure):
            return failure.notification ? nil : RPCResponse.failure(id: failure.id, error: failure.error)
        case .success(let request):
            var context = context
            context.requestID = alone ? request.id : nil
            let outcome = await call(request.method, params: request.params, context: context)
            guard let id = request.id else { return nil }
            switch outcome {
            case .success(let result): return RPCResponse.success(id: id, result: result)
            case .failure(let error): return RPCResponse.failure(id: id, error: error)
            }
        }
    }

    /// Runs one method by name: validation, the handler, and error mapping.
    public func call(_ method: String, params: [String: JSONValue], context: CallContext) async -> Result<JSONValue, RPCError> {
        guard let spec = registry.spec(method), let handler = registry.handler(method) else {
            return .failure(.methodNotFound(method))
        }
        if spec.writes, !context.mayWrite {
            return .failure(RPCError(DomainError(.readOnly, "\(method) changes data, and this user may only read (rpc.read_only_groups)")))
        }
        do {
            let validated = try registry.validate(params, for: spec)
            let result = try await ProgressPulse.around(method, asked: validated.bool("progress") == true, context: context,
                                                        interval: progressInterval) { context in
                try await handler(validated, context)
            }
            if spec.writes { onWrite(method) }
            return .success(result)
        } catch {
            return .failure(failure(method, error))
        }
    }

    /// The JSON-RPC error for a failed call; internal failures are logged, never described.
    private func failure(_ method: String, _ error: any Error) -> RPCError {
        switch error {
        case let error as RPCError: return error
        case let error as DomainError: return RPCError(error)
        case let error as any DomainErrorConvertible:
            onInternalError(method, error)
            return RPCError(error.domainError)
        default:
            onInternalError(method, error)
            return .internalError
        }
    }
}
