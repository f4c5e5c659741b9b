/// Validated parameters of one call; accessors assume the registry has checked the types.
public struct Params: Sendable {
    public let values: [String: JSONValue]

    public init(_ values: [String: JSONValue]) {
        self.values = values
    }

    /// True when the parameter was given (explicit `null` included).
    public func has(_ name: String) -> Bool { values[name] != nil }

    /// True when the parameter was given as an explicit `null`.
    public func isNull(_ name: String) -> Bool { values[name] == .null }

    public func string(_ name: String) -> String? { values[name]?.stringValue }

    public func bool(_ name: String) -> Bool? { values[name]?.boolValue }

    public func int(_ name: String) -> Int? { values[name]?.intValue }

    public func strings(_ name: String) -> [String]? { values[name]?.arrayValue?.compactMap(\.stringValue) }

    /// The exact text of a decimal parameter (a string or a number literal).
    public func decimalText(_ name: String) -> String? {
        switch values[name] {
        case .string(let s)?: s
        case .number(let n)?: n
        default: nil
        }
    }

    public func requiredString(_ name: String) throws -> String {
        guard let value = string(name) else { throw RPCError.invalidParams("missing required parameter \(name)", param: name) }
        return value
    }

    public func requiredDecimalText(_ name: String) throws -> String {
        guard let value = decimalText(name) else { throw RPCError.invalidParams("missing required parameter \(name)", param: name) }
        return value
    }
}
