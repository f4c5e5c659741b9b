import Foundation
import SavingsCore
import Logging
import Testing
@testable import SavingsDaemon

@Suite struct TOMLReaderTests {
    @Test func readsTablesKeysAndValues() throws {
        let entries = try TOMLReader.read("""
            # comment
            log_level = "debug" # trailing
            "quoted key" = 'lit\\eral'
            [rpc]
            max_line_bytes = 2_048
            flags = [ "a",
              "b", # inside
            ]
            [database]
            ratio = 0.10
            on = true
            """)
        let byKey = Dictionary(uniqueKeysWithValues: entries.map { ($0.key, $0) })
        #expect(byKey["log_level"]?.value == .string("debug"))
        #expect(byKey["quoted key"]?.value == .string("lit\\eral"))
        #expect(byKey["rpc.max_line_bytes"]?.value == .integer(2048))
        #expect(byKey["rpc.max_line_bytes"]?.line == 5)
        #expect(byKey["rpc.flags"]?.value == .array([.string("a"), .string("b")]))
        #expect(byKey["database.ratio"]?.value == .float("0.10"))
        #expect(byKey["database.on"]?.value == .bool(true))
    }

    @Test(arguments: [
        ("a = ", 1), ("a = \"x", 1), ("\n\nkey = bare", 3), ("a = 1\na = 2", 2), ("[t]\n[t]", 2), ("a = {b = 1}", 1),
        ("[[x]]", 1), ("a = 1 2", 1), ("= 1", 1), ("a = \"\"\"x\"\"\"", 1),
    ])
    func reportsTheLineOfErrors(text: String, line: Int) {
        do {
            _ = try TOMLReader.read(text)
            Issue.record("accepted invalid TOML: \(text)")
        } catch {
            #expect(error.line == line)
        }
    }
}

@Suite struct ConfigLoaderTests {
    let environment = ["HOME": "/home/u", "XDG_RUNTIME_DIR": "/run/user/1000"]

    func load(options: DaemonOptions = DaemonOptions(), environment extra: [String: String] = [:],
              file: String? = nil) throws -> DaemonConfig {
        try ConfigLoader.load(options: options, environment: environment.merging(extra) { $1 }, uid: 1000) { _ in file }
    }

    func message(_ body: () throws -> Void) -> String {
        do {
            try body()
            return ""
        } catch let error as ConfigError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func defaultsWithoutAFile() throws {
        let config = try load()
        #expect(config.mode == .user)
        #expect(config.socketPath == "/run/user/1000/savingsd/savingsd.sock")
        #expect(config.databasePath == "/home/u/.local/share/savingsd/savings.db")
        #expect(config.configFile == nil)
        #expect(config.logLevel == .info)
        #expect(config.maxLineBytes == 1_048_576)
        #expect(config.eventLoops == 16)
    }

    @Test func eventLoopsAreBoundedAndTakeEffectAtStart() throws {
        #expect(try load(environment: ["SAVINGSD_EVENT_LOOPS": "4"]).eventLoops == 4)
        #expect(try load(file: "[rpc]\nevent_loops = 64").eventLoops == 64)
        for bad in ["0", "257"] {
            #expect(message { _ = try load(environment: ["SAVINGSD_EVENT_LOOPS": bad]) }.contains("out of range"))
        }
        let live = LiveConfig(try load())
        var changed = try load()
        changed.eventLoops = 2
        #expect(live.reload(changed) == ["rpc.event_loops"])
        #expect(live.current.eventLoops == 16)
    }

    @Test func precedenceIsFlagThenEnvironmentThenFile() throws {
        let file = """
            log_level = "warning"
            [rpc]
            socket = "/file.sock"
            [database]
            path = "/file.db"
            """
        let fromFile = try load(file: file)
        #expect(fromFile.socketPath == "/file.sock")
        #expect(fromFile.logLevel == .warning)
        #expect(fromFile.sources["rpc.socket"] == "/home/u/.config/savingsd/savingsd.toml:3")
        let fromEnvironment = try load(environment: ["SAVINGSD_SOCKET": "/env.sock", "SAVINGSD_LOG_LEVEL": "error"], file: file)
        #expect(fromEnvironment.socketPath == "/env.sock")
        #expect(fromEnvironment.logLevel == .error)
        #expect(fromEnvironment.databasePath == "/file.db")
        let fromFlag = try load(options: DaemonOptions(socket: "/flag.sock", logLevel: "debug"),
                                environment: ["SAVINGSD_SOCKET": "/env.sock"], file: file)
        #expect(fromFlag.socketPath == "/flag.sock")
        #expect(fromFlag.logLevel == .debug)
        #expect(fromFlag.sources["rpc.socket"] == "command line")
    }

    @Test func unknownKeysAndBadValuesNameFileLineAndReason() {
        let unknown = message { _ = try load(file: "[rpc]\nsockett = \"/x\"") }
        #expect(unknown.contains("savingsd.toml:2"))
        #expect(unknown.contains("unknown key 'rpc.sockett'"))
        let badType = message { _ = try load(file: "[rpc]\nmax_line_bytes = \"big\"") }
        #expect(badType.contains(":2: rpc.max_line_bytes: must be an integer"))
        let range = message { _ = try load(file: "[rpc]\nmax_line_bytes = 10") }
        #expect(range.contains("out of range"))
        let level = message { _ = try load(file: "log_level = \"loud\"") }
        #expect(level.contains("not a log level"))
        let zone = message { _ = try load(file: "timezone = \"Mars/Olympus\"") }
        #expect(zone.contains("unknown time zone"))
        let relative = message { _ = try load(options: DaemonOptions(database: "relative.db")) }
        #expect(relative.contains("--database: 'relative.db' must be an absolute path"))
        let syntax = message { _ = try load(file: "a = = 1") }
        #expect(syntax.contains("savingsd.toml:1"))
        let env = message { _ = try load(environment: ["SAVINGSD_MAX_LINE_BYTES": "lots"]) }
        #expect(env.contains("SAVINGSD_MAX_LINE_BYTES"))
    }

    @Test func anExplicitMissingFileIsAnError() {
        let missing = message { _ = try load(options: DaemonOptions(config: "/nope.toml")) }
        #expect(missing.contains("/nope.toml: configuration file not found"))
    }

    @Test func chainTablesNameAProviderAndAURL() throws {
        let config = try load(file: """
            [onchain]
            interval = 600
            [onchain.bitcoin]
            provider = "esplora"
            url = "http://127.0.0.1:3002/api/"
            proxy = "socks5://127.0.0.1:9050"
            [onchain.bitcoin-testnet]
            provider = "blockbook"
            url = "https://tbtc1.trezor.io"
            """)
        #expect(config.onchainInterval == 600)
        #expect(config.chainProviders["bitcoin"] == ChainProviderConfig(kind: .esplora, url: "http://127.0.0.1:3002/api", proxy: "socks5://127.0.0.1:9050"))
        #expect(config.chainProviders["bitcoin-testnet"]?.kind == .blockbook)
        #expect(config.rendered.contains("onchain.bitcoin.proxy = \"socks5://127.0.0.1:9050\""))
        #expect(try load().chainProviders.isEmpty, "no chain by default: nothing about a wallet leaves the machine")

        let unknown = message { _ = try load(file: "[onchain.dogecoin]\nprovider = \"blockbook\"\nurl = \"http://x\"\n") }
        #expect(unknown.contains("not a chain savingsd watches"), "\(unknown)")
        let noURL = message { _ = try load(file: "[onchain.bitcoin]\nprovider = \"blockbook\"\n") }
        #expect(noURL.contains("[onchain.bitcoin] needs url"), "\(noURL)")
        let noProvider = message { _ = try load(file: "[onchain.litecoin]\nurl = \"http://x\"\n") }
        #expect(noProvider.contains("needs provider"), "\(noProvider)")
        let proxy = message { _ = try load(file: "[onchain.bitcoin]\nprovider = \"esplora\"\nurl = \"http://x\"\nproxy = \"tor\"\n") }
        #expect(proxy.contains("is not a proxy"), "\(proxy)")
        let key = message { _ = try load(file: "[onchain.bitcoin]\nprovider = \"esplora\"\nurl = \"http://x\"\napi_key = \"k\"\n") }
        #expect(key.contains("unknown key 'api_key' in [onchain.bitcoin]"), "\(key)")
        let ether = message { _ = try load(file: "[onchain.ethereum]\nprovider = \"esplora\"\nurl = \"http://x\"\n") }
        #expect(ether.contains("use provider = \"blockbook\""), "\(ether)")
    }

    @Test func shippedConfigFileIsValidAndNamesEveryKey() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("config/savingsd.toml")
        let text = try String(contentsOf: url, encoding: .utf8)
        _ = try load(file: text)
        // Uncommenting every key must also be valid.
        let uncommented = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            line.hasPrefix("#") && line.dropFirst().first?.isLetter == true && line.contains(" = ") ? String(line.dropFirst()) : String(line)
        }.joined(separator: "\n")
        let config = try load(file: uncommented)
        for setting in ConfigLoader.settings {
            #expect(config.sources[setting.key] != nil, "config/savingsd.toml lacks \(setting.key)")
        }
    }

    @Test func reloadKeepsRestartOnlySettings() throws {
        let live = LiveConfig(try load())
        var changed = try load(options: DaemonOptions(socket: "/other.sock", logLevel: "debug"))
        changed.maxLineBytes = 4096
        let restartOnly = live.reload(changed)
        #expect(restartOnly == ["rpc.socket"])
        #expect(live.current.logLevel == .debug)
        #expect(live.current.maxLineBytes == 4096)
        #expect(live.current.socketPath == "/run/user/1000/savingsd/savingsd.sock")
    }
}

@Suite struct CommandWordsTests {
    @Test func splitsLikeAShellWithoutExpanding() throws {
        #expect(try CommandWords.split("notify-send 'Savings' \"goal \\\"reached\\\"\" a\\ b $HOME") ==
                ["notify-send", "Savings", "goal \"reached\"", "a b", "$HOME"])
        #expect(try CommandWords.split("  ") == [])
        #expect(try CommandWords.split("sh -c 'cat >> \"$0\"' /tmp/x") == ["sh", "-c", "cat >> \"$0\"", "/tmp/x"])
        #expect(throws: ConfigError.self) { try CommandWords.split("echo 'unterminated") }
    }

    @Test func onEventAcceptsAnArrayOrAString() throws {
        let load = { (text: String) throws -> DaemonConfig in
            try ConfigLoader.load(options: DaemonOptions(), environment: ["HOME": "/h"], uid: 1) { _ in text }
        }
        #expect(try load(#"on_event = ["/bin/notify", "--quiet"]"#).onEvent == ["/bin/notify", "--quiet"])
        #expect(try load(#"on_event = "/bin/notify 'two words'""#).onEvent == ["/bin/notify", "two words"])
        #expect(throws: ConfigError.self) { try load("on_event = 5") }
        #expect(try load("[planning]\nattention_threshold = 5000.50\nreminder_day = 20").thresholds.attention == Decimal(string: "5000.5")!)
    }
}
