// libFuzzer target for the request decoder and parameter validation: every input is one
// request line. It must never crash, and every line must produce a valid response or none.
import SavingsCore
import SavingsRPC

/// One method per parameter type, with bounds, so validation of each kind is exercised.
let registry: MethodRegistry = {
    var registry = MethodRegistry()
    let spec = MethodSpec(
        "fuzz.all", summary: "every parameter type",
        params: [
            .required("name", .string, "a string"), .optional("count", .integer(min: 1, max: 1000), "bounded"),
            .optional("flag", .boolean, "a boolean"), .optional("amount", .decimal, "a decimal"),
            .optional("day", .date, "a date"), .optional("goal", .reference, "a reference"),
            .optional("topics", .stringArray, "strings"), .optional("extra", .object, "an object"),
        ],
        result: ResultSpec("echo", "the validated params", schema: ["type": "object"]), writes: true)
    registry.register(spec) { params, _ in .object(params.values) }
    return registry
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: count))
    guard let value = try? JSONParser.parse(bytes) else { return 0 }
    let requests: [JSONValue] = value.arrayValue ?? [value]
    for element in requests.prefix(100) {
        guard case .success(let request) = RPCRequest.decode(element) else { continue }
        if let spec = registry.spec(request.method), let params = try? registry.validate(request.params, for: spec) {
            // Whatever passed validation must serialize back to JSON that parses.
            let echoed = JSONSerializer.bytes(.object(params.values))
            guard (try? JSONParser.parse(echoed)) != nil else { fatalError("validated params do not round-trip") }
            if let amount = params.decimalText("amount") { _ = try? Amount.parse(amount) }
        }
    }
    return 0
}
