/// JSON Schema (draft 7, as OpenRPC 1.2 uses) of what methods return, built from a few pieces so
/// each result's schema reads like the object it describes. Types shared by several results are
/// named in `Wire.components` and referred to with `ref`; `rpc.discover` carries them under
/// `components.schemas`, docs/protocol.md renders them, and the integration tests check every
/// answer they receive against its method's schema (Tests/schema/answers.py).
public enum Schema {
    public static let string: JSONValue = ["type": "string"]
    public static let boolean: JSONValue = ["type": "boolean"]
    public static let integer: JSONValue = ["type": "integer"]
    /// A count or size: an integer of at least zero.
    public static let count: JSONValue = ["type": "integer", "minimum": 0]
    /// An exact decimal, always a string: `"1234.50"`, `"-0.00010137"`.
    public static let decimal: JSONValue = ["type": "string", "pattern": "^-?[0-9]+(\\.[0-9]+)?$", "x-kind": "decimal"]
    /// A row's id: a lower-case UUID.
    public static let id: JSONValue = [
        "type": "string", "format": "uuid", "pattern": "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", "x-kind": "id",
    ]
    /// UTC ISO 8601 with milliseconds, `2026-11-22T10:00:00.000Z`.
    public static let timestamp: JSONValue = [
        "type": "string", "format": "date-time", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$",
        "x-kind": "timestamp",
    ]
    /// A calendar date, `YYYY-MM-DD`.
    public static let date: JSONValue = ["type": "string", "format": "date", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$", "x-kind": "date"]
    /// A month, `YYYY-MM`.
    public static let month: JSONValue = ["type": "string", "pattern": "^[0-9]{4}-(0[1-9]|1[0-2])$", "x-kind": "month"]
    /// A currency or asset code: 2-10 upper-case letters or digits.
    public static let currency: JSONValue = ["type": "string", "pattern": "^[A-Z0-9]{2,10}$", "x-kind": "currency"]
    /// A currency pair, `BASE/QUOTE` (`BTC/EUR`).
    public static let pair: JSONValue = ["type": "string", "pattern": "^[A-Z0-9]{2,10}/[A-Z0-9]{2,10}$", "x-kind": "pair"]

    /// A step of a conversion: `BASE/QUOTE`, with `^-1` when the rate was inverted.
    public static let ratePath: JSONValue = ["type": "string", "pattern": "^[A-Z0-9]{2,10}/[A-Z0-9]{2,10}(\\^-1)?$", "x-kind": "rate step"]

    /// An object with these properties; all of them are always present except those in `optional`.
    public static func object(_ properties: [String: JSONValue], optional: Set<String> = [], _ description: String? = nil) -> JSONValue {
        var schema: [String: JSONValue] = ["type": "object", "properties": .object(properties)]
        let required = properties.keys.filter { !optional.contains($0) }.sorted()
        if !required.isEmpty { schema["required"] = .array(required.map(JSONValue.string)) }
        if let description { schema["description"] = .string(description) }
        return .object(schema)
    }

    /// The object schema `base` with more properties, all of them always present except those in `optional`.
    public static func extending(_ base: JSONValue, _ properties: [String: JSONValue], optional: Set<String> = [],
                                 _ description: String? = nil) -> JSONValue {
        guard case .object(var schema) = base, case .object(let known)? = schema["properties"] else { return base }
        let required = (schema["required"]?.arrayValue ?? []) + properties.keys.filter { !optional.contains($0) }.sorted().map(JSONValue.string)
        schema["properties"] = .object(known.merging(properties) { $1 })
        schema["required"] = .array(required)
        schema["description"] = description.map(JSONValue.string)
        return .object(schema)
    }

    /// An object whose keys are data (a name, a table), each value of the schema given.
    public static func map(_ values: JSONValue, _ description: String? = nil) -> JSONValue {
        var schema: [String: JSONValue] = ["type": "object", "additionalProperties": values]
        if let description { schema["description"] = .string(description) }
        return .object(schema)
    }

    public static func array(_ items: JSONValue) -> JSONValue { ["type": "array", "items": items] }

    /// `schema`, or `null`.
    public static func nullable(_ schema: JSONValue) -> JSONValue { ["oneOf": [schema, ["type": "null"]]] }

    /// One of the schemas given (a result whose shape depends on the call).
    public static func oneOf(_ schemas: [JSONValue]) -> JSONValue { ["oneOf": .array(schemas)] }

    /// One of these strings.
    public static func enumeration(_ values: [String]) -> JSONValue { ["type": "string", "enum": .array(values.map(JSONValue.string))] }

    /// One of the raw values of `type`.
    public static func enumeration<T: CaseIterable & RawRepresentable>(_ type: T.Type) -> JSONValue where T.RawValue == String {
        enumeration(type.allCases.map(\.rawValue))
    }

    /// Exactly this value.
    public static func constant(_ value: JSONValue) -> JSONValue { ["const": value] }

    /// The named type `name` of `Wire.components`.
    public static func ref(_ name: String) -> JSONValue { ["$ref": .string("#/components/schemas/\(name)")] }

    /// `schema` with a description.
    public static func described(_ schema: JSONValue, _ description: String) -> JSONValue {
        guard case .object(var object) = schema else { return schema }
        if object["$ref"] != nil { return ["allOf": [schema], "description": .string(description)] }
        object["description"] = .string(description)
        return .object(object)
    }
}
