import Foundation
import Logging
import SavingsRPC
import ServiceLifecycle

/// Runs the `on_event` command for every event, one at a time, with the event as JSON on
/// stdin. No shell is involved unless the command names one. Failures and time-outs are
/// logged; a slow hook loses events (bounded buffer) rather than slowing the daemon.
struct EventHookService: Service {
    let events: EventBus
    let liveConfig: LiveConfig
    let logger: Logger
    let timeout: Duration = .seconds(10)
    private let id: UInt64
    private let stream: AsyncStream<DaemonEvent>

    /// Subscribes at once, so events published before the service runs are not missed.
    init(events: EventBus, liveConfig: LiveConfig, logger: Logger) {
        self.events = events
        self.liveConfig = liveConfig
        self.logger = logger
        (id, stream) = events.subscribe(topics: nil, label: "on_event hook")
    }

    func run() async throws {
        await withGracefulShutdownHandler {
            for await event in stream {
                guard let command = liveConfig.current.onEvent, !command.isEmpty else { continue }
                await runHook(command, event: event)
            }
        } onGracefulShutdown: {
            events.unsubscribe(id)
        }
    }

    private func runHook(_ command: [String], event: DaemonEvent) async {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0].contains("/") ? command[0] : "/usr/bin/env")
        process.arguments = command[0].contains("/") ? Array(command.dropFirst()) : command
        var environment = ProcessInfo.processInfo.environment
        environment["SAVINGSD_EVENT_TOPIC"] = event.topic
        process.environment = environment
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            logger.error("on_event hook could not start: \(error)", metadata: ["topic": "\(event.topic)"])
            return
        }
        let payload = Data((JSONSerializer.serialize(event.notification["params"] ?? .null) + "\n").utf8)
        try? input.fileHandleForWriting.write(contentsOf: payload)
        try? input.fileHandleForWriting.close()
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline {
            try? await Pause.sleep(for: .milliseconds(20))
        }
        if process.isRunning {
            process.terminate()
            logger.warning("on_event hook timed out and was stopped", metadata: ["topic": "\(event.topic)"])
        } else if process.terminationStatus != 0 {
            logger.warning("on_event hook exited with status \(process.terminationStatus)", metadata: ["topic": "\(event.topic)"])
        }
    }
}

/// Splits a command string into words like a shell would for quoting only: single quotes
/// are literal, double quotes allow \" and \\, a backslash escapes the next character.
/// Nothing is expanded.
enum CommandWords {
    static func split(_ text: String) throws(ConfigError) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        var escaping = false
        for character in text {
            if escaping {
                current.append(character)
                escaping = false
                continue
            }
            switch (quote, character) {
            case ("'", "'"), ("\"", "\""):
                quote = nil
            case ("'", _):
                current.append(character)
            case ("\"", "\\"):
                escaping = true
            case ("\"", _):
                current.append(character)
            case (nil, "'"), (nil, "\""):
                quote = character
                inWord = true
            case (nil, "\\"):
                escaping = true
                inWord = true
            case (nil, " "), (nil, "\t"), (nil, "\n"):
                if inWord { words.append(current) }
                current = ""
                inWord = false
            default:
                current.append(character)
                inWord = true
            }
        }
        guard quote == nil, !escaping else { throw ConfigError(message: "unterminated quote or escape in the command") }
        if inWord { words.append(current) }
        return words
    }
}
