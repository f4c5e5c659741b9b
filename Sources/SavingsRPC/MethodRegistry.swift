/// Where the caller of a method is; handlers that need the connection get it from here.
public struct CallContext: Sendable {
    public var connectionID: UInt64
    /// Turns the connection into an event stream (set by transports that can stream).
    public var subscribe: (@Sendable (_ topics: Set<String>?) -> Void)?
    /// Sends a notification line to the caller while its request runs (progress of long work).
    public var notify: (@Sendable (_ notification: JSONValue) -> Void)?
    /// False for callers in a read-only group: methods that write are refused with `read_only`.
    public var mayWrite = true
    /// True for the daemon's own user and root: only they may name files on the daemon's side
    /// (`path`, a rules file's path), which the daemon opens with its own rights. Everyone else
    /// sends and receives files over the connection (`upload`, `download`).
    public var mayNamePaths = false
    /// The id of the request being answered: nil for a notification or a request inside a
    /// batch (neither can carry a file, see `FileTransfer`).
    public var requestID: RequestID?
    /// The next line the caller sends on this connection while the request runs (an upload's
    /// chunks), nil once the connection ended; set by transports that can carry files.
    public var receive: (@Sendable () async throws -> [UInt8]?)?
    /// Writes a line to the caller in order and without loss, waiting while the caller does not
    /// read (a download's chunks); set by transports that can carry files.
    public var send: (@Sendable (_ line: [UInt8]) async throws -> Void)?
    /// Closes the connection once the request is answered: an upload that failed half-way
    /// leaves the rest of its chunks on the line.
    public var endConnection: (@Sendable () -> Void)?

    public init(connectionID: UInt64, subscribe: (@Sendable (_ topics: Set<String>?) -> Void)? = nil,
                notify: (@Sendable (_ notification: JSONValue) -> Void)? = nil) {
        self.connectionID = connectionID
        self.subscribe = subscribe
        self.notify = notify
    }

    /// A `progress` notification: `{"method": "progress", "params": {"method", "phase", "done", "total"?}}`.
    public func progress(_ method: String, phase: String, done: Int, total: Int? = nil) {
        var params: [String: JSONValue] = ["method": .string(method), "phase": .string(phase), "done": .int(done)]
        if let total { params["total"] = .int(total) }
        notify?(["jsonrpc": "2.0", "method": "progress", "params": .object(params)])
    }
}

public typealias MethodHandler = @Sendable (Params, CallContext) async throws -> JSONValue
/// A handler that needs neither the database nor the connection and returns at once: the
/// server may run it on the connection's I/O thread without a hop (`daemon.ping`).
public typealias ImmediateHandler = @Sendable (Params) throws -> JSONValue

/// Every method the daemon serves, each declared once: its parameters, result, whether it
/// writes, and its handler. `help`, `rpc.discover` and parameter validation derive from it.
public struct MethodRegistry: Sendable {
    struct Entry: Sendable {
        var spec: MethodSpec
        var handler: MethodHandler
        var immediate: ImmediateHandler?
    }

    private var entries: [String: Entry] = [:]

    public init() {}

    /// Adds a method. Registering a name twice is a programming error.
    public mutating func register(_ spec: MethodSpec, handler: @escaping MethodHandler) {
        precondition(entries[spec.name] == nil, "method \(spec.name) registered twice")
        entries[spec.name] = Entry(spec: spec, handler: handler)
    }

    /// Adds a method answered without suspending (see `ImmediateHandler`); it also runs
    /// through the ordinary path wherever that is used.
    public mutating func registerImmediate(_ spec: MethodSpec, handler: @escaping ImmediateHandler) {
        precondition(!spec.writes, "an immediate method cannot write")
        register(spec) { params, _ in try handler(params) }
        entries[spec.name]?.immediate = handler
    }

    /// Names of the methods with an immediate handler.
    public var immediateNames: [String] { entries.values.filter { $0.immediate != nil }.map(\.spec.name).sorted() }

    /// The declaration and immediate handler of a method that has one, in one lookup.
    func immediate(_ name: String) -> (spec: MethodSpec, handler: ImmediateHandler)? {
        guard let entry = entries[name], let handler = entry.immediate else { return nil }
        return (entry.spec, handler)
    }

    public var specs: [MethodSpec] { entries.values.map(\.spec).sorted { $0.name < $1.name } }

    public func spec(_ name: String) -> MethodSpec? { entries[name]?.spec }

    func handler(_ name: String) -> MethodHandler? { entries[name]?.handler }

    /// Validates `params` against the method's declaration: unknown names, missing required
    /// parameters and wrong types are -32602 naming the parameter.
    public func validate(_ params: [String: JSONValue], for spec: MethodSpec) throws -> Params {
        // A method declares a handful of parameters: a scan beats building a dictionary.
        for name in params.keys.sorted() where !spec.params.contains(where: { $0.name == name }) {
            let known = spec.params.map(\.name).joined(separator: ", ")
            throw RPCError.invalidParams(
                "unknown parameter \(name) for \(spec.name)" + (known.isEmpty ? " (it takes none)" : " (known: \(known))"),
                param: name)
        }
        var accepted: [String: JSONValue] = [:]
        for param in spec.params {
            switch params[param.name] {
            case nil:
                if param.required { throw RPCError.invalidParams("missing required parameter \(param.name)", param: param.name) }
            case .null?:
                if param.nullable {
                    accepted[param.name] = .null
                } else if param.required {
                    throw RPCError.invalidParams("\(param.name) must not be null", param: param.name)
                }
            case let value?:
                if let problem = param.check(value) { throw RPCError.invalidParams(problem, param: param.name) }
                if let longest = Self.longestString(in: value), longest > Self.maxStringBytes {
                    throw RPCError.invalidParams("\(param.name) holds a string of \(longest) bytes; at most \(Self.maxStringBytes) are accepted",
                                                 param: param.name)
                }
                accepted[param.name] = value
            }
        }
        return Params(accepted)
    }

    /// Longest string accepted anywhere in a parameter (names, notes and paths are far shorter).
    public static let maxStringBytes = 65_536

    static func longestString(in value: JSONValue) -> Int? {
        switch value.unwrapped {
        case .string(let text): text.utf8.count
        case .array(let items): items.compactMap(longestString).max()
        case .object(let members): members.values.compactMap(longestString).max()
        default: nil
        }
    }

    /// Adds `help` and `rpc.discover`, generated from everything registered so far.
    public mutating func registerIntrospection(title: String, version: String) {
        let helpSpec = MethodSpec(
            "help", summary: "List methods, or describe one method with its parameters.",
            params: [.optional("method", .string, "a method name to describe")],
            result: ResultSpec("help", "the list of methods; with `method`, that method's parameters and result", schema: Self.helpSchema),
            writes: false)
        let discoverSpec = MethodSpec(
            "rpc.discover", summary: "The OpenRPC document describing every method.",
            result: ResultSpec("OpenRPC", "an OpenRPC 1.2 document: every method, its parameters and its result's JSON Schema; the named types under components.schemas",
                               schema: Schema.object([
                                   "openrpc": Schema.string, "info": Schema.object(["title": Schema.string, "version": Schema.string]),
                                   "methods": Schema.array(["type": "object"]), "components": Schema.object(["schemas": ["type": "object"]]),
                                   "x-file-transfer": ["type": "object"],
                               ], "see https://spec.open-rpc.org for its parts")),
            writes: false)
        var snapshot = self
        snapshot.entries[helpSpec.name] = Entry(spec: helpSpec, handler: { _, _ in .null })
        snapshot.entries[discoverSpec.name] = Entry(spec: discoverSpec, handler: { _, _ in .null })
        let specs = snapshot.specs
        register(helpSpec) { params, _ in
            try Self.help(specs: specs, method: params.string("method"))
        }
        register(discoverSpec) { _, _ in
            Self.openRPC(specs: specs, title: title, version: version)
        }
    }

    static let helpSchema = Schema.oneOf([
        Schema.object(["methods": Schema.array(Schema.object(["name": Schema.string, "summary": Schema.string, "writes": Schema.boolean]))],
                      "without `method`"),
        Schema.object([
            "name": Schema.string, "summary": Schema.string, "writes": Schema.boolean,
            "params": Schema.array(Schema.object([
                "name": Schema.string, "type": Schema.string, "required": Schema.boolean, "nullable": Schema.boolean, "description": Schema.string,
            ])),
            "result": Schema.object(["name": Schema.string, "description": Schema.string]),
        ], "with `method`"),
    ])

    static func help(specs: [MethodSpec], method: String?) throws -> JSONValue {
        guard let method else {
            return ["methods": .array(specs.map { ["name": .string($0.name), "summary": .string($0.summary), "writes": .bool($0.writes)] })]
        }
        guard let spec = specs.first(where: { $0.name == method }) else { throw RPCError.methodNotFound(method) }
        return [
            "name": .string(spec.name),
            "summary": .string(spec.summary),
            "writes": .bool(spec.writes),
            "params": .array(spec.params.map {
                ["name": .string($0.name), "type": .string($0.type.label), "required": .bool($0.required),
                 "nullable": .bool($0.nullable), "description": .string($0.description)]
            }),
            "result": ["name": .string(spec.result.name), "description": .string(spec.result.description)],
        ]
    }

    static func openRPC(specs: [MethodSpec], title: String, version: String) -> JSONValue {
        [
            "openrpc": "1.2.6",
            "info": ["title": .string(title), "version": .string(version)],
            "x-file-transfer": FileTransfer.description,
            "components": ["schemas": .object(Wire.components)],
            "methods": .array(specs.map { spec in
                var method: [String: JSONValue] = [
                    "name": .string(spec.name),
                    "summary": .string(spec.summary),
                    "paramStructure": "by-name",
                    "params": .array(spec.params.map { param in
                        var schema = param.type.schema
                        if param.nullable, case .object(var object) = schema {
                            object = ["oneOf": [.object(object), ["type": "null"]]]
                            schema = .object(object)
                        }
                        return ["name": .string(param.name), "required": .bool(param.required),
                                "description": .string(param.description), "schema": schema]
                    }),
                    "result": ["name": .string(spec.result.name), "description": .string(spec.result.description),
                               "schema": spec.result.schema],
                    "x-writes": .bool(spec.writes),
                ]
                if let transfer = spec.transfer { method["x-transfer"] = .string(transfer.rawValue) }
                return .object(method)
            }),
        ]
    }
}
