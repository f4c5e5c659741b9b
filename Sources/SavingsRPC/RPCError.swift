import SavingsCore

/// A JSON-RPC 2.0 error object.
public struct RPCError: Error, Sendable, Equatable {
    public var code: Int
    public var message: String
    public var data: JSONValue?

    public init(code: Int, message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    public static let parseErrorCode = -32700
    public static let invalidRequestCode = -32600
    public static let methodNotFoundCode = -32601
    public static let invalidParamsCode = -32602
    public static let internalErrorCode = -32603
    public static let domainErrorCode = -32000

    public static func parseError(_ detail: String) -> RPCError {
        RPCError(code: parseErrorCode, message: "Parse error: \(detail)")
    }

    public static func invalidRequest(_ detail: String) -> RPCError {
        RPCError(code: invalidRequestCode, message: "Invalid Request: \(detail)")
    }

    public static func methodNotFound(_ method: String) -> RPCError {
        RPCError(code: methodNotFoundCode, message: "Method not found: \(method)", data: ["method": .string(method)])
    }

    public static func invalidParams(_ detail: String, param: String? = nil) -> RPCError {
        var data: [String: JSONValue] = ["kind": "invalid_field"]
        if let param { data["param"] = .string(param) }
        return RPCError(code: invalidParamsCode, message: "Invalid params: \(detail)", data: .object(data))
    }

    /// Never carries the underlying error: internals (paths, stacks) stay in the daemon's log.
    public static let internalError = RPCError(code: internalErrorCode, message: "Internal error")

    /// The wire form of a domain error: field problems are invalid params, the rest -32000;
    /// `data.kind` names the kind either way.
    public init(_ error: DomainError) {
        var data: [String: JSONValue] = error.details.mapValues(JSONValue.string)
        data["kind"] = .string(error.kind.rawValue)
        if error.kind == .invalidField {
            if let field = error.details["field"] { data["param"] = .string(field) }
            self.init(code: Self.invalidParamsCode, message: "Invalid params: \(error.message)", data: .object(data))
        } else {
            self.init(code: Self.domainErrorCode, message: error.message, data: .object(data))
        }
    }

    public var json: JSONValue {
        var object: [String: JSONValue] = ["code": .int(code), "message": .string(message)]
        if let data { object["data"] = data }
        return .object(object)
    }

    /// The `data.kind` of a domain error, if any.
    public var kind: String? { data?["kind"]?.stringValue }
}
