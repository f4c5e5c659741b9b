import SavingsRPC

/// The two invocations scripts run most, `savingsctl --version` and `savingsctl call METHOD
/// [PARAMS]`, taken without building the whole command tree: ArgumentParser reflects over every
/// command's options first, which was most of savingsctl's start-up. Only a fully valid command
/// line of those shapes is taken here; anything else (help, a typo, a bad value, `--`) goes to
/// ArgumentParser, so every message and exit code stays the one it gives.
enum FastPath {
    /// What the command line asks for, or nil when ArgumentParser should read it.
    enum Request: Equatable {
        case version
        case call(method: String, params: [String], socket: String?, json: Bool, timeout: Double)
    }

    static func request(_ arguments: [String]) -> Request? {
        if arguments == ["--version"] { return .version }
        var socket: String?, json = false, timeout: Double?
        var positional: [String] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("-") else {
                positional.append(argument)
                continue
            }
            let (name, inline) = split(argument)
            switch name {
            case "--json" where inline == nil && !json:
                json = true
            case "--socket" where socket == nil, "--timeout" where timeout == nil:
                guard let value = inline ?? (index < arguments.endIndex ? arguments[index] : nil), !value.hasPrefix("-") else { return nil }
                if inline == nil { index += 1 }
                if name == "--socket" {
                    socket = value
                } else {
                    guard let seconds = Double(value), seconds > 0, seconds <= 86_400 else { return nil }
                    timeout = seconds
                }
            default:
                return nil
            }
        }
        guard positional.count >= 2, positional[0] == "call" else { return nil }
        return .call(method: positional[1], params: Array(positional.dropFirst(2)), socket: socket, json: json, timeout: timeout ?? GlobalOptions.defaultTimeout)
    }

    /// `--name=value` → ("--name", "value"); `--name` → ("--name", nil).
    private static func split(_ argument: String) -> (String, String?) {
        guard let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }

    static func run(_ request: Request) throws {
        switch request {
        case .version:
            print(Savingsctl.version)
        case .call(let method, let params, let socket, let json, let timeout):
            try CallCommand.call(method, params, session: ClientSession(socket: socket, json: json, timeout: timeout))
        }
    }
}
