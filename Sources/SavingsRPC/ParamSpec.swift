/// The type of one named parameter; drives validation, `help` and the OpenRPC schema.
public enum ParamType: Sendable, Equatable {
    case string
    case integer(min: Int?, max: Int?)
    case boolean
    /// An exact decimal given as a string or a JSON number (read from its literal text).
    case decimal
    /// A calendar date, `YYYY-MM-DD`.
    case date
    /// An id or a unique name.
    case reference
    case stringArray
    case object

    public static let integer = ParamType.integer(min: nil, max: nil)

    var schema: JSONValue {
        switch self {
        case .string: return ["type": "string"]
        case .integer(let min, let max):
            var schema: [String: JSONValue] = ["type": "integer"]
            if let min { schema["minimum"] = .int(min) }
            if let max { schema["maximum"] = .int(max) }
            return .object(schema)
        case .boolean: return ["type": "boolean"]
        case .decimal:
            return ["oneOf": [["type": "string", "pattern": "^-?[0-9]+(\\.[0-9]+)?$"], ["type": "number"]],
                    "description": "exact decimal; strings recommended"]
        case .date: return ["type": "string", "format": "date"]
        case .reference: return ["type": "string", "description": "id or unique name"]
        case .stringArray: return ["type": "array", "items": ["type": "string"]]
        case .object: return ["type": "object"]
        }
    }

    var label: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .boolean: "boolean"
        case .decimal: "decimal"
        case .date: "date"
        case .reference: "id-or-name"
        case .stringArray: "string[]"
        case .object: "object"
        }
    }
}

/// One named parameter of a method.
public struct ParamSpec: Sendable, Equatable {
    public var name: String
    public var type: ParamType
    public var required: Bool
    /// Whether an explicit `null` is meaningful (e.g. "clear this value").
    public var nullable: Bool
    public var description: String

    public init(_ name: String, _ type: ParamType, required: Bool = false, nullable: Bool = false, _ description: String) {
        self.name = name
        self.type = type
        self.required = required
        self.nullable = nullable
        self.description = description
    }

    public static func required(_ name: String, _ type: ParamType, _ description: String) -> ParamSpec {
        ParamSpec(name, type, required: true, description)
    }

    public static func optional(_ name: String, _ type: ParamType, _ description: String) -> ParamSpec {
        ParamSpec(name, type, required: false, description)
    }

    /// `progress` of a long method whose only progress is the pulse (see `ProgressPulse`).
    public static let progress = optional(
        "progress", .boolean, "send progress notifications {method: \"progress\", params: {method, phase: \"working\", done}} at least every 2 s while it runs")

    /// Checks one supplied value against the declared type.
    func check(_ value: JSONValue) -> String? {
        func expected(_ what: String) -> String { "\(name) must be \(what), not \(value.typeName)" }
        switch (type, value) {
        case (.string, .string), (.reference, .string), (.date, .string), (.boolean, .bool), (.object, .object):
            return nil
        case (.decimal, .string), (.decimal, .number):
            return nil
        case (.integer(let min, let max), .number(let literal)):
            guard let int = Int(literal) else { return "\(name) must be an integer, not \(literal)" }
            if let min, int < min { return "\(name) must be at least \(min)" }
            if let max, int > max { return "\(name) must be at most \(max)" }
            return nil
        case (.stringArray, .array(let items)):
            return items.allSatisfy({ $0.stringValue != nil }) ? nil : "\(name) must be an array of strings"
        case (.string, _), (.reference, _): return expected("a string")
        case (.date, _): return expected("a date string (YYYY-MM-DD)")
        case (.boolean, _): return expected("a boolean")
        case (.object, _): return expected("an object")
        case (.decimal, _): return expected("a decimal string or number")
        case (.integer, _): return expected("an integer")
        case (.stringArray, _): return expected("an array of strings")
        }
    }
}

/// What a method returns, for `help` and OpenRPC.
public struct ResultSpec: Sendable, Equatable {
    public var name: String
    public var description: String
    public var schema: JSONValue

    public init(_ name: String, _ description: String, schema: JSONValue) {
        self.name = name
        self.description = description
        self.schema = schema
    }
}

/// Everything the registry knows about one method.
public struct MethodSpec: Sendable, Equatable {
    public var name: String
    public var summary: String
    public var params: [ParamSpec]
    public var result: ResultSpec
    /// Whether the method changes stored data (read-only peers may not call it).
    public var writes: Bool
    /// Whether the method can take (upload) or give (download) a file over the connection.
    public var transfer: FileTransfer.Direction?

    public init(_ name: String, summary: String, params: [ParamSpec] = [], result: ResultSpec, writes: Bool,
                transfer: FileTransfer.Direction? = nil) {
        self.name = name
        self.summary = summary
        self.params = params
        self.result = result
        self.writes = writes
        self.transfer = transfer
    }
}
