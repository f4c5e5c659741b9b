import SavingsCore
import SavingsRPC

/// `requests`: lines as the socket server hands them to the dispatcher (the input split at its
/// newlines, as the server frames them). The request decoder and parameter validation of every
/// parameter type; the immediate path (`handleImmediately`, which reads the line's bytes in
/// place) must answer exactly as the full path does, and whatever validates must serialize to
/// JSON that parses again. The parse keeping only some members (a provider's page) must keep,
/// of any text the full parse reads, exactly that tree without the other members; reading an
/// array's objects by named members must find each where the full parse does, and reading one
/// member's list in the same pass as the members (a page's transactions) must find what finding
/// the members first and reading the list after finds.
enum RequestsTarget {
    static let target = FuzzTarget("requests", prepare: { _ = dispatcher }, run: run)

    /// One method per parameter type, with bounds, so validation of each kind is exercised; an
    /// immediate method like `daemon.ping`; `help` and `rpc.discover`.
    static let registry: MethodRegistry = {
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
        registry.registerImmediate(MethodSpec(
            "daemon.ping", summary: "Check that the daemon answers.",
            result: ResultSpec("pong", "{\"pong\": true}", schema: ["type": "object"]), writes: false)) { _ in
            ["pong": true]
        }
        registry.registerIntrospection(title: "savings-fuzz", version: "0")
        return registry
    }()

    static let dispatcher = RPCDispatcher(registry: registry, maxBatch: 100)

    static func run(_ input: UnsafeRawBufferPointer) {
        for line in input.split(separator: 0x0A, omittingEmptySubsequences: true).prefix(16) {
            let bytes = Array(line)
            decodeAndValidate(bytes)
            keepingAgrees(bytes)
            namedAgrees(bytes)
            readingInPlaceAgrees(bytes)
            if let immediate = dispatcher.handleImmediately(line: bytes) {
                let full = blocking { await dispatcher.handle(line: bytes, context: CallContext(connectionID: 1)) }
                guard full == immediate else {
                    finding("the immediate path answered \(String(decoding: immediate, as: UTF8.self)), "
                        + "the full path \(full.map { String(decoding: $0, as: UTF8.self) } ?? "nothing")")
                }
            }
        }
    }

    static let kept: Set<String> = ["jsonrpc", "method", "params", "id", "value", "amount"]

    static func keepingAgrees(_ bytes: [UInt8]) {
        let kept = try? JSONParser.parse(bytes, in: 0..<bytes.count, keeping: Self.kept)
        guard let full = try? JSONParser.parse(bytes) else { return }
        func dropped(_ value: JSONValue) -> JSONValue {
            switch value {
            case .object(let members): .object(members.filter { Self.kept.contains($0.key) }.mapValues(dropped))
            case .array(let items): .array(items.map(dropped))
            default: value
            }
        }
        guard let kept else { finding("the keeping parse refused what the full parse read") }
        guard kept == dropped(full) else { finding("the keeping parse kept \(JSONSerializer.serialize(kept)), not \(JSONSerializer.serialize(dropped(full)))") }
    }

    static let named = JSONParser.Names(["jsonrpc", "method", "params", "id", "value", "amount"])

    /// Reading an array's objects by named members (a provider's page) must find, of any array
    /// of objects the full parse reads, each named member's value where the full parse has it.
    static func namedAgrees(_ bytes: [UInt8]) {
        var found: [[JSONValue?]] = []
        let read = JSONParser.forEachObject(of: bytes, in: 0..<bytes.count, named: named) { _, values in
            found.append(values.map { $0.flatMap { try? JSONParser.parse(bytes, in: $0) } })
        }
        guard let items = (try? JSONParser.parse(bytes))?.arrayValue else { return }
        let objects = items.compactMap(\.objectValue)
        guard objects.count == items.count else { return }
        guard read else { finding("the named reading refused an array of objects the full parse read") }
        let expected = objects.map { object in named.names.map { object[$0] } }
        guard found == expected else { finding("the named reading found \(found), not \(expected)") }
    }

    /// Reading the list of one member (`params`) in the same pass as the object's members must
    /// give the members and the list's objects that finding the members first and reading the
    /// list after gives, and refuse what that refuses.
    static func readingInPlaceAgrees(_ bytes: [UInt8]) {
        var inPlace: [[Range<Int>?]] = []
        let members = JSONParser.members(of: bytes, reading: "params") { start in
            JSONParser.forEachObject(of: bytes, from: start, before: bytes.count, named: named) { _, values in inPlace.append(values) }
        }
        var after: [[Range<Int>?]] = []
        let found = JSONParser.members(of: bytes)
        let listed = found?.first { $0.key == "params" }.map { member in
            JSONParser.forEachObject(of: bytes, in: member.value, named: named) { _, values in after.append(values) }
        } ?? true
        guard let found, listed else {
            guard members == nil else { finding("reading in place accepted what reading after refused") }
            return
        }
        guard let members else { finding("reading in place refused what reading after read") }
        guard members.map(\.key) == found.map(\.key), members.map(\.value) == found.map(\.value), inPlace == after else {
            finding("reading in place found \(members) and \(inPlace), not \(found) and \(after)")
        }
    }

    /// What the full path does before it calls a handler: parse, decode, validate.
    static func decodeAndValidate(_ bytes: [UInt8]) {
        guard let value = try? JSONParser.parse(bytes) else { return }
        let requests: [JSONValue] = value.arrayValue ?? [value]
        for element in requests.prefix(100) {
            guard case .success(let request) = RPCRequest.decode(element) else { continue }
            if let spec = registry.spec(request.method), let params = try? registry.validate(request.params, for: spec) {
                // Whatever passed validation must serialize back to JSON that parses.
                let echoed = JSONSerializer.bytes(.object(params.values))
                guard (try? JSONParser.parse(echoed)) != nil else { finding("validated params do not round-trip: \(echoed)") }
                if let amount = params.decimalText("amount") { _ = try? Amount.parse(amount) }
            }
        }
    }
}
