import ArgumentParser
import SavingsCLI
import SavingsRPC

struct CallCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "call", abstract: "Call any method: a JSON object or key=value pairs as params.",
        discussion: """
            Values of key=value pairs are read as JSON when they parse (numbers, true, false, null, \
            arrays, objects, "quoted strings"), otherwise as plain strings. Examples:
              savingsctl call daemon.ping
              savingsctl call goal.get goal=Emergency
              savingsctl call goal.create '{"name":"Bike","currency":"EUR","target_amount":"900","deadline":"2027-03-31"}'
            The result is printed as JSON.
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "Method name (see `savingsctl call help`).") var method: String
    @Argument(help: "A JSON object, or key=value pairs.") var params: [String] = []

    func run() throws {
        try Self.call(method, params, session: ClientSession(global))
    }

    static func call(_ method: String, _ params: [String], session: @autoclosure () throws -> ClientSession) throws {
        let parsed = try parse(params)
        print(JSONSerializer.pretty(try session().call(method, parsed)))
    }

    static func parse(_ arguments: [String]) throws -> [String: JSONValue] {
        if arguments.count == 1, arguments[0].hasPrefix("{") {
            guard let value = try? JSONParser.parse(arguments[0]), case .object(let object) = value else {
                throw ClientFailure.usage("params are not a valid JSON object: \(arguments[0])")
            }
            return object
        }
        var params: [String: JSONValue] = [:]
        for argument in arguments {
            guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex else {
                throw ClientFailure.usage("expected key=value or one JSON object, got '\(argument)'")
            }
            let key = String(argument[..<equals])
            let raw = String(argument[argument.index(after: equals)...])
            params[key] = (try? JSONParser.parse(raw)) ?? .string(raw)
        }
        return params
    }
}
