import ArgumentParser
import Foundation

// Exit codes are part of the interface: 0 ok, 1 the daemon returned an error,
// 2 usage, 3 cannot reach the daemon.
do {
    if let request = FastPath.request(Array(CommandLine.arguments.dropFirst())) {
        try FastPath.run(request)
    } else {
        var command = try Savingsctl.parseAsRoot()
        try command.run()
    }
} catch let failure as ClientFailure {
    FileHandle.standardError.write(Data("savingsctl: \(failure.message)\n".utf8))
    exit(failure.exitCode)
} catch {
    let code = Savingsctl.exitCode(for: error)
    if code == .success {
        print(Savingsctl.fullMessage(for: error))
        exit(0)
    }
    FileHandle.standardError.write(Data((Savingsctl.fullMessage(for: error) + "\n").utf8))
    exit(2)
}
