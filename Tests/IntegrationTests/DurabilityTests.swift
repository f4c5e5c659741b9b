import Foundation
import SavingsRPC
import Synchronization
import Testing

/// Every acknowledged write survives `kill -9` at any moment; nothing is half-written.
@Suite struct DurabilityTests {
    static let rounds = Int(ProcessInfo.processInfo.environment["SAVINGSD_DURABILITY_ROUNDS"] ?? "") ?? 10

    @Test func acknowledgedWritesSurviveKillNine() throws {
        let directory = try makeScratchDirectory()
        let setup = try DaemonProcess(directory: directory)
        _ = try setup.call("asset.create", ["name": "Bank", "currency": "EUR", "kind": "fiat"])
        _ = try setup.call("goal.create", ["name": "House", "currency": "EUR", "target_amount": "100000", "deadline": "2030-01-01"])
        _ = setup.stop()
        let acknowledged = Mutex<Set<String>>([])
        var generator = SystemRandomNumberGenerator()
        for round in 0..<Self.rounds {
            let daemon = try DaemonProcess(directory: directory)
            let socket = daemon.socketPath
            let writers = (0..<3).map { writer in
                Thread.detachNewThreadWithResult {
                    guard let client = try? RPCClient(socketPath: socket) else { return }
                    for n in 0..<100_000 {
                        let id = "r\(round)-w\(writer)-\(n)"
                        let params: [String: JSONValue] = writer == 2
                            ? ["goal": "House", "amount": "1.25", "note": .string(id)]
                            : ["asset": "Bank", "amount": "2.5", "external_id": .string(id)]
                        // An answer is an acknowledgement; a lost connection ends this writer.
                        guard (try? client.call(writer == 2 ? "goal.contribute" : "tx.add", params)) != nil else { return }
                        acknowledged.withLock { _ = $0.insert(id) }
                    }
                }
            }
            Thread.sleep(forTimeInterval: Double(UInt64.random(in: 150...600, using: &generator)) / 1000)
            daemon.signal(SIGKILL)
            _ = daemon.waitForExit()
            for writer in writers { try? writer.value() }
        }
        let survivor = try DaemonProcess(directory: directory)
        let export = try survivor.call("data.export")
        let stored = Set((export["transactions"]?.arrayValue ?? []).compactMap { $0["external_id"]?.stringValue ?? $0["note"]?.stringValue })
        let acked = acknowledged.withLock { $0 }
        let lost = acked.subtracting(stored)
        #expect(acked.count > Self.rounds * 10, "the writers got through (\(acked.count) acknowledged)")
        #expect(lost.isEmpty, "\(lost.count) acknowledged writes lost, e.g. \(lost.prefix(5))")
        let check = try survivor.call("db.check")
        #expect(check["ok"] == true, "\(check)")
        // Contributions are a deposit and an allocation in one transaction: never one without the other.
        let goal = try survivor.call("goal.get", ["goal": "House"])
        let contributions = stored.filter { $0.contains("-w2-") }.count
        #expect(goal["funding"]?.arrayValue?.first { $0["asset_name"] == "EUR savings" }?["funded"]
                == .string(Self.money(Decimal(contributions) * Decimal(string: "1.25")!)))
        print("durability: \(Self.rounds) rounds, \(acked.count) writes acknowledged, \(lost.count) lost")
    }

    static func money(_ value: Decimal) -> String {
        let formatter = NumberFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.minimumFractionDigits = 2
        formatter.maximumFractionDigits = 2
        formatter.usesGroupingSeparator = false
        return formatter.string(from: value as NSDecimalNumber) ?? ""
    }
}
