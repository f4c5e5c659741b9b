import Foundation
import SavingsRPC
import Testing

@Suite struct RatesTests {
    func writeRates(_ path: String, _ text: String) throws {
        try text.write(toFile: path + ".tmp", atomically: false, encoding: .utf8)
        _ = rename(path + ".tmp", path)
    }

    func fileDaemon(_ extra: [String: String] = [:],
                    rates: String = #"{"rates":[{"base":"BTC","quote":"EUR","rate":"40000"}]}"#) throws -> (DaemonProcess, String) {
        let directory = try makeScratchDirectory()
        let file = directory + "/rates.json"
        try writeRates(file, rates)
        let daemon = try DaemonProcess(directory: directory, environment: [
            "SAVINGSD_RATES_PROVIDER": "file", "SAVINGSD_RATES_FILE": file, "SAVINGSD_RATES_REFRESH_INTERVAL": "1",
            "SAVINGSD_RATES_RETRY_MIN": "1", "SAVINGSD_RATES_RETRY_MAX": "2",
        ].merging(extra) { $1 })
        return (daemon, file)
    }

    @Test func fileProviderRefreshesKeepsTheLastGoodRatesAndBacksOff() throws {
        let (daemon, file) = try fileDaemon()
        _ = try daemon.call("asset.create", ["name": "Wallet", "currency": "BTC", "kind": "crypto"])
        _ = try daemon.call("goal.create", ["name": "House", "currency": "EUR", "target_amount": "100000", "deadline": "2030-01-01"])
        _ = try daemon.call("tx.add", ["asset": "Wallet", "amount": "1"])
        _ = try daemon.call("allocation.set", ["asset": "Wallet", "goal": "House", "amount": "0.5"])
        try waitUntil(timeout: 10) { try daemon.call("goal.get", ["goal": "House"])["current_total"] == "20000.00" }
        let listed = try #require(try daemon.call("rates.list")["rates"]?.arrayValue?.first)
        #expect(listed["provider"] == "file")
        #expect(listed["stale"] == false)

        try writeRates(file, #"{"rates":[{"base":"BTC","quote":"EUR","rate":50000}]}"#)
        try waitUntil(timeout: 10) { try daemon.call("goal.get", ["goal": "House"])["current_total"] == "25000.00" }

        let events = try daemon.raw()
        try events.sendLine(#"{"jsonrpc":"2.0","id":1,"method":"events.subscribe","params":{"topics":["rates.failed","rates.updated"]}}"#)
        _ = try events.readLine()
        try writeRates(file, "garbage")
        var failed: JSONValue?
        while failed == nil, let line = try events.readLine(timeoutMilliseconds: 10_000) {
            let event = try JSONParser.parse(line)
            if event["params"]?["topic"] == "rates.failed" { failed = event }
        }
        #expect(failed?["params"]?["data"]?["provider"] == "file")
        #expect(try daemon.call("goal.get", ["goal": "House"])["current_total"] == "25000.00", "the last good rates stay")
        let refresh = try daemon.call("rates.refresh")
        #expect(refresh["status"] == "failed")
        try writeRates(file, #"{"rates":[{"base":"BTC","quote":"EUR","rate":"60000"}]}"#)
        #expect(try daemon.call("rates.refresh")["status"] == "updated")
        #expect(try daemon.call("goal.get", ["goal": "House"])["current_total"] == "30000.00")
        #expect(try daemon.call("rates.history", ["base": "BTC", "quote": "EUR"])["rates"]?.arrayValue?.count ?? 0 >= 3)
        #expect(daemon.log.components(separatedBy: "rates refresh failed").count - 1 <= 4, "one line per failed refresh")
    }

    @Test func oldRatesAreUsedButFlaggedStale() throws {
        let (daemon, _) = try fileDaemon(["SAVINGSD_RATES_STALE_AFTER": "3600"],
                                         rates: #"{"rates":[{"base":"BTC","quote":"EUR","rate":"40000","as_of":"2026-01-01T00:00:00Z"}]}"#)
        _ = try daemon.call("asset.create", ["name": "Wallet", "currency": "BTC", "kind": "crypto"])
        _ = try daemon.call("goal.create", ["name": "House", "currency": "EUR", "target_amount": "100000", "deadline": "2030-01-01"])
        _ = try daemon.call("tx.add", ["asset": "Wallet", "amount": "1"])
        _ = try daemon.call("allocation.set", ["asset": "Wallet", "goal": "House", "amount": "0.5"])
        #expect(try daemon.call("rates.refresh")["status"] == "updated")
        let goal = try daemon.call("goal.get", ["goal": "House"])
        #expect(goal["current_total"] == "20000.00", "stale rates are still used")
        #expect(goal["stale"] == true)
        #expect(goal["stale_rates"] == ["BTC/EUR"])
        #expect(try daemon.call("dashboard.get")["stale_rates"] == ["BTC/EUR"])
        #expect(try daemon.call("rates.convert", ["amount": "1", "from": "BTC", "to": "EUR"])["stale"] == true)
        let rates = try daemon.call("rates.list")["rates"]?.arrayValue ?? []
        #expect(rates.contains { $0["stale"] == true && $0["as_of"] == "2026-01-01T00:00:00.000Z" })
        #expect(try ok(["--socket", daemon.socketPath], ["rates", "list"]).contains("STALE"))
    }

    @Test func manualProviderAndConfigurationErrors() throws {
        let daemon = try DaemonProcess()
        #expect(try daemon.call("rates.refresh")["status"] == "manual")
        let directory = try makeScratchDirectory()
        let bad = try DaemonProcess(directory: directory, arguments: ["--check-config"],
                                    environment: ["SAVINGSD_RATES_PROVIDER": "file"], waitForReady: false)
        #expect(bad.waitForExit() == 1)
        #expect(bad.log.contains("needs rates.file"))
        let unknown = try DaemonProcess(directory: directory, arguments: ["--check-config"],
                                        environment: ["SAVINGSD_RATES_PROVIDER": "oracle"], waitForReady: false)
        #expect(unknown.waitForExit() == 1)
    }
}
