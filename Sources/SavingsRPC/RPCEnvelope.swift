/// A request id: JSON-RPC allows strings, numbers and null.
public enum RequestID: Sendable, Hashable {
    case string(String)
    case number(String)
    case null

    public var json: JSONValue {
        switch self {
        case .string(let s): .string(s)
        case .number(let n): .number(n)
        case .null: .null
        }
    }
}

/// One validated JSON-RPC 2.0 call. `id == nil` marks a notification (no response).
public struct RPCRequest: Sendable, Equatable {
    public var id: RequestID?
    public var method: String
    public var params: [String: JSONValue]

    public init(id: RequestID?, method: String, params: [String: JSONValue] = [:]) {
        self.id = id
        self.method = method
        self.params = params
    }

    public var json: JSONValue {
        var object: [String: JSONValue] = ["jsonrpc": "2.0", "method": .string(method), "params": .object(params)]
        if let id { object["id"] = id.json }
        return .object(object)
    }

    /// Validates one element of a call (an object); the error carries the id when it could be read.
    public static func decode(_ value: JSONValue) -> Result<RPCRequest, RPCFailure> {
        guard case .object(let object) = value else {
            return .failure(RPCFailure(id: .null, error: .invalidRequest("a request must be a JSON object")))
        }
        var id: RequestID?
        switch object["id"] {
        case nil: id = nil
        case .string(let s)?: id = .string(s)
        case .number(let n)?: id = .number(n)
        case .null?: id = .null
        case let other?:
            return .failure(RPCFailure(id: .null, error: .invalidRequest("id must be a string, a number or null, not \(other.typeName)")))
        }
        let replyID = id ?? .null
        guard object["jsonrpc"] == .string("2.0") else {
            return .failure(RPCFailure(id: replyID, error: .invalidRequest("\"jsonrpc\" must be exactly \"2.0\"")))
        }
        guard case .string(let method)? = object["method"] else {
            return .failure(RPCFailure(id: replyID, error: .invalidRequest("\"method\" must be a string")))
        }
        for key in object.keys where !["jsonrpc", "id", "method", "params"].contains(key) {
            return .failure(RPCFailure(id: replyID, error: .invalidRequest("unknown member \"\(key)\"")))
        }
        switch object["params"] {
        case nil:
            return .success(RPCRequest(id: id, method: method))
        case .object(let params)?:
            return .success(RPCRequest(id: id, method: method, params: params))
        case .array?:
            return .failure(RPCFailure(id: replyID, notification: id == nil,
                                       error: .invalidParams("params must be an object (parameters are passed by name)")))
        case let other?:
            return .failure(RPCFailure(id: replyID, error: .invalidRequest("params must be an object, not \(other.typeName)")))
        }
    }
}

/// A request that could not be run, with the id to answer it under.
public struct RPCFailure: Error, Sendable, Equatable {
    public var id: RequestID
    /// A well-formed notification gets no answer even when it fails.
    public var notification: Bool
    public var error: RPCError

    public init(id: RequestID, notification: Bool = false, error: RPCError) {
        self.id = id
        self.notification = notification
        self.error = error
    }
}

/// Builders for response objects.
public enum RPCResponse {
    public static func success(id: RequestID, result: JSONValue) -> JSONValue {
        ["jsonrpc": "2.0", "id": id.json, "result": result]
    }

    public static func failure(id: RequestID, error: RPCError) -> JSONValue {
        ["jsonrpc": "2.0", "id": id.json, "error": error.json]
    }
}
