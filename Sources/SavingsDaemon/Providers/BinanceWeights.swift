import Foundation

/// Binance's request weight as its answers report it, so calls wait for the next minute rather
/// than be refused (https://github.com/binance/binance-spot-api-docs/blob/master/rest-api.md
/// "LIMITS"; the wallet endpoints' `/sapi` limits,
/// https://developers.binance.com/docs/binance-spot-api-docs/rest-api/limits): every answer
/// carries the weight used in the current minute, per IP for `/api` (`X-MBX-USED-WEIGHT-1M`,
/// 6 000 a minute) and per IP or per account for `/sapi` (`X-SAPI-USED-IP-WEIGHT-1M`, 12 000;
/// `X-SAPI-USED-UID-WEIGHT-1M`, 180 000). A minute's count starts again at the minute. The
/// counts include other programs' calls from the same address or account, which is why they
/// are read rather than only counted here. Shared by every Binance link of the daemon.
actor BinanceWeights {
    enum Limiter: String, CaseIterable, Sendable {
        case api = "X-MBX-USED-WEIGHT-1M"
        case sapiIP = "X-SAPI-USED-IP-WEIGHT-1M"
        case sapiUID = "X-SAPI-USED-UID-WEIGHT-1M"

        var limit: Int {
            switch self {
            case .api: 6_000
            case .sapiIP: 12_000
            case .sapiUID: 180_000
            }
        }
    }

    /// The weight used as last reported, and the minute (since 1970) it was reported in.
    private var used: [Limiter: (weight: Int, minute: Int64)] = [:]

    /// Notes what an answer's headers report.
    func record(_ headers: [(String, String)], now: Date = Date()) {
        for limiter in Limiter.allCases {
            guard let value = headers.first(where: { $0.0.lowercased() == limiter.rawValue.lowercased() })?.1,
                  let weight = Int(value.trimmingCharacters(in: .whitespaces)), (0...10_000_000).contains(weight) else { continue }
            used[limiter] = (weight, Self.minute(now))
        }
    }

    /// Waits until a call of `cost` fits under `limiter`'s limit.
    func take(_ cost: Int, _ limiter: Limiter) async throws {
        let wait = Self.delay(used: used[limiter], cost: cost, limit: limiter.limit, now: Date())
        if wait > 0 { try await Task.sleep(for: .milliseconds(Int(wait * 1000))) }
    }

    /// How long to wait before a call of `cost` (pure): nothing unless the weight reported in
    /// this same minute and the cost pass nine tenths of the limit; then until a second into
    /// the next minute.
    static func delay(used: (weight: Int, minute: Int64)?, cost: Int, limit: Int, now: Date) -> TimeInterval {
        guard let used, used.minute == minute(now), (used.weight + cost) * 10 > limit * 9 else { return 0 }
        return TimeInterval((used.minute + 1) * 60) - now.timeIntervalSince1970 + 1
    }

    static func minute(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 / 60).rounded(.down)) }
}
