import SavingsCore

/// Turns one inbound line into at most one outbound line, per JSON-RPC 2.0: single calls,
/// notifications, batches and every error case. Never throws; never leaks internals.
public struct RPCDispatcher: Sendable {
    public let registry: MethodRegistry
    public let maxBatch: Int
    private let onInternalError: @Sendable (String, any Error) -> Void
    private let onWrite: @Sendable (String) -> Void

    /// `onWrite` runs after every successful call of a method that writes.
    public init(registry: MethodRegistry, maxBatch: Int = 100,
                onInternalError: @escaping @Sendable (_ method: String, _ error: any Error) -> Void = { _, _ in },
                onWrite: @escaping @Sendable (_ method: String) -> Void = { _ in }) {
        self.registry = registry
        self.maxBatch = maxBatch
        self.onInternalError = onInternalError
        self.onWrite = onWrite
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
            return await handleSingle(value, context: context)
        }
        if batch.isEmpty {
            return RPCResponse.failure(id: .null, error: .invalidRequest("an empty batch is not a request"))
        }
        if batch.count > maxBatch {
            return RPCResponse.failure(id: .null, error: .invalidRequest("a batch may hold at most \(maxBatch) requests (got \(batch.count))"))
        }
        var responses: [JSONValue] = []
        for element in batch {
            if let response = await handleSingle(element, context: context) { responses.append(response) }
        }
        return responses.isEmpty ? nil : .array(responses)
    }

    private func handleSingle(_ value: JSONValue, context: CallContext) async -> JSONValue? {
        switch RPCRequest.decode(value) {
        case .failure(let failure):
            return failure.notification ? nil : RPCResponse.failure(id: failure.id, error: failure.error)
        case .success(let request):
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
            let result = try await handler(validated, context)
            if spec.writes { onWrite(method) }
            return .success(result)
        } catch let error as RPCError {
            return .failure(error)
        } catch let error as DomainError {
            return .failure(RPCError(error))
        } catch let error as any DomainErrorConvertible {
            onInternalError(method, error)
            return .failure(RPCError(error.domainError))
        } catch {
            onInternalError(method, error)
            return .failure(.internalError)
        }
    }
}
