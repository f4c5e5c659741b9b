/// A JSON value that keeps numbers as their literal text, so amounts stay exact.
public indirect enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// The number's literal text as it appeared on the wire (`0.1`, `-12`, `1e3`).
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
    /// A value together with its serialization, written once: answers that carry it copy the
    /// bytes. It is the value it holds for every reading (accessors, equality, `unwrapped`).
    case serialized(SerializedJSON)

    public static func int(_ value: Int) -> JSONValue { .number(String(value)) }

    public static func optional(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }

    /// The value itself, out of its `serialized` wrapper if it has one.
    public var unwrapped: JSONValue {
        if case .serialized(let serialized) = self { return serialized.value }
        return self
    }

    public var stringValue: String? {
        if case .string(let s) = unwrapped { return s }
        return nil
    }

    public var objectValue: [String: JSONValue]? {
        if case .object(let o) = unwrapped { return o }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let a) = unwrapped { return a }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let b) = unwrapped { return b }
        return nil
    }

    /// The integer value of a number literal without fraction or exponent.
    public var intValue: Int? {
        if case .number(let n) = unwrapped { return Int(n) }
        return nil
    }

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs.unwrapped, rhs.unwrapped) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a == b
        default: false
        }
    }

    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }

    /// The JSON type name used in error messages and schemas.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        case .serialized(let serialized): serialized.value.typeName
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(String(value)) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    public init(nilLiteral: ()) { self = .null }
}

/// A JSON value and its compact serialization (`JSONSerializer.bytes`), made once. A goal's
/// figures are most of a large dashboard and seldom move: kept this way, an answer copies
/// their bytes instead of writing every key and string again.
public final class SerializedJSON: Sendable {
    public let value: JSONValue
    let bytes: [UInt8]

    public init(_ value: JSONValue) {
        self.value = value.unwrapped
        bytes = JSONSerializer.bytes(value)
    }
}
