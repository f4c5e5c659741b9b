import Foundation
import SavingsWeb

// Run by `savingsctl web` (which finds the daemon's socket and checks it answers):
//   savings-web --socket PATH --listen HOST:PORT [--open]
var socket: String?
var listen = "127.0.0.1:0"
var open = false
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--socket": socket = arguments.popFirst()
    case "--listen": listen = arguments.popFirst() ?? listen
    case "--open": open = true
    default:
        FileHandle.standardError.write(Data("savings-web: unknown argument \(argument) (run it as savingsctl web)\n".utf8))
        exit(2)
    }
}
guard let socket else {
    FileHandle.standardError.write(Data("savings-web: --socket PATH is required (run it as savingsctl web)\n".utf8))
    exit(2)
}
do {
    try WebServer.serve(listen: listen, socketPath: socket, open: open)
} catch {
    FileHandle.standardError.write(Data("savingsctl web: \(error)\n".utf8))
    exit(1)
}
