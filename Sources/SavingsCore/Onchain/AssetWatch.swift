import Foundation

/// An asset's watch (SPEC 10): what it watches and how its last sync went.
public struct AssetWatch: Sendable, Equatable {
    public var assetID: UUID
    public var target: WatchTarget
    public var createdAt: Date
    /// The provider of the last sync (`blockbook`, `esplora`).
    public var provider: String?
    public var lastSyncAt: Date?
    public var lastError: String?
    /// The chain's height at the last sync, when the provider says.
    public var height: Int?
    public var pending: [PendingTransaction]
    /// Confirmed transactions that move nothing for the set (an incoming token transfer seen on
    /// an ether watch): known, so they are not fetched again.
    public var ignored: Set<String> = []
    /// The provider's confirmed balance of the watched set at the last sync.
    public var reportedBalance: Decimal?
    public var reconciled: Bool?
    /// Where an unfinished first sync goes on (provider-specific).
    public var cursor: String?

    public init(assetID: UUID, target: WatchTarget, createdAt: Date, provider: String? = nil, lastSyncAt: Date? = nil,
                lastError: String? = nil, height: Int? = nil, pending: [PendingTransaction] = [], reportedBalance: Decimal? = nil,
                reconciled: Bool? = nil, cursor: String? = nil) {
        self.assetID = assetID
        self.target = target
        self.createdAt = createdAt
        self.provider = provider
        self.lastSyncAt = lastSyncAt
        self.lastError = lastError
        self.height = height
        self.pending = pending
        self.reportedBalance = reportedBalance
        self.reconciled = reconciled
        self.cursor = cursor
    }
}

/// What one sync found and did (the result of `asset.sync`, per asset).
public struct ChainSyncOutcome: Sendable, Equatable {
    public var added = 0
    public var removed: [String] = []
    public var pending: [PendingTransaction] = []
    public var balance: Decimal = 0
    public var reportedBalance: Decimal = 0
    public var reconciled = false
    public var height: Int?

    public init() {}
}
