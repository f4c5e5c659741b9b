/// The results in docs/protocol.md: each method's result and each named type as a table of its
/// fields, written from the JSON Schemas of `rpc.discover` (see `Schema`).
extension ProtocolDocument {
    /// A method's result: its fields, or the type it is, or the shapes it may take.
    static func result(_ result: JSONValue?) -> String {
        let name = result?["name"]?.stringValue ?? "result"
        let description = result?["description"]?.stringValue.map { ": `\($0)`" } ?? ""
        var out = "Result (`\(name)`)\(description)\n\n"
        guard let schema = result?["schema"] else { return out }
        out += shape(schema)
        return out
    }

    /// One schema as the document shows it: a table of fields, a type, or its alternatives.
    static func shape(_ schema: JSONValue) -> String {
        if let options = schema["oneOf"]?.arrayValue, !options.contains(where: { $0["type"] == "null" }) {
            return "One of:\n\n" + options.map { option in
                "- \(option["description"]?.stringValue ?? typeName(option))\n\n" + shape(option)
            }.joined()
        }
        let rows = fields(schema, prefix: "")
        guard !rows.isEmpty else { return "Type: \(typeName(schema))\n\n" }
        return "| field | type | meaning |\n|---|---|---|\n" + rows.joined(separator: "\n") + "\n\n"
    }

    /// The named types, one table each.
    static func types(_ discover: JSONValue) -> String {
        let types = discover["components"]?["schemas"]?.objectValue ?? [:]
        guard !types.isEmpty else { return "" }
        var out = """
            ## Types

            Named types the results share (`components.schemas` of `rpc.discover`). A field is always
            present unless marked *optional*; *or null* says when it may be null. The kinds of string:
            *decimal* an exact decimal (`"-12.50"`, never a JSON number), *id* a lower-case UUID,
            *timestamp* UTC with milliseconds (`2026-11-22T10:00:00.000Z`), *date* `YYYY-MM-DD`, *month*
            `YYYY-MM`, *currency* 2-10 upper-case letters or digits, *pair* `BASE/QUOTE`, *rate step* a
            pair with `^-1` where the rate was inverted.


            """
        for name in types.keys.sorted() {
            let schema = types[name]!
            out += "### Type `\(name)`\n\n"
            if let description = schema["description"]?.stringValue { out += description + "\n\n" }
            out += shape(schema)
        }
        return out
    }

    /// Table rows for the properties of an object schema, nested objects as `a.b` and objects in
    /// arrays as `a[].b`.
    static func fields(_ schema: JSONValue, prefix: String) -> [String] {
        guard let properties = schema["properties"]?.objectValue else { return [] }
        let required = Set(schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        var rows: [String] = []
        for key in properties.keys.sorted() {
            let property = properties[key]!
            let path = prefix + key
            var type = typeName(property)
            if !required.contains(key) { type += ", *optional*" }
            let meaning = (description(property) ?? "").replacingOccurrences(of: "|", with: "\\|")
            rows.append("| `\(path)` | \(type) | \(meaning) |")
            var inner = nonNull(property)
            var nested = path + "."
            if inner["type"] == "array", let items = inner["items"] {
                inner = items
                nested = path + "[]."
            }
            rows += fields(inner, prefix: nested)
        }
        return rows
    }

    /// The schema without its `null` alternative.
    static func nonNull(_ schema: JSONValue) -> JSONValue {
        if let options = schema["oneOf"]?.arrayValue, options.count == 2, let other = options.first(where: { $0["type"] != "null" }) {
            return other
        }
        if let wrapped = schema["allOf"]?.arrayValue?.first { return wrapped }
        return schema
    }

    static func description(_ schema: JSONValue) -> String? { schema["description"]?.stringValue }

    /// A short name for a schema: a named type as a link, a kind (decimal, id, ...), a list.
    static func typeName(_ schema: JSONValue) -> String {
        if let ref = schema["$ref"]?.stringValue {
            let name = String(ref.split(separator: "/").last ?? "")
            return "[\(name)](#type-\(name.lowercased()))"
        }
        if let wrapped = schema["allOf"]?.arrayValue?.first { return typeName(wrapped) }
        if let options = schema["oneOf"]?.arrayValue {
            let named = options.filter { $0["type"] != "null" }.map(typeName)
            let alternatives = named.count > 1 ? "one of " + named.joined(separator: ", ") : named.first ?? "null"
            return options.count > named.count ? alternatives + " or null" : alternatives
        }
        if let constant = schema["const"] { return "`\(JSONSerializer.serialize(constant))`" }
        if let values = schema["enum"]?.arrayValue { return "one of " + values.map { "`\($0.stringValue ?? JSONSerializer.serialize($0))`" }.joined(separator: ", ") }
        if let kind = schema["x-kind"]?.stringValue { return kind }
        switch schema["type"] {
        case "array"?: return "array of " + (schema["items"].map(typeName) ?? "any")
        case "integer"?: return schema["minimum"] == 0 ? "integer ≥ 0" : "integer"
        case "object"?:
            if let values = schema["additionalProperties"], values != false { return "map of name to " + typeName(values) }
            return "object"
        case .array(let names)?: return names.compactMap(\.stringValue).joined(separator: " or ")
        case let type?: return type.stringValue ?? "any"
        default: return "any"
        }
    }
}
