/// A chain savingsd can watch (SPEC 10): its coin, the smallest unit's decimals, and the
/// prefixes its addresses and extended public keys carry.
public enum Chain: String, Sendable, CaseIterable {
    case bitcoin
    case bitcoinTestnet = "bitcoin-testnet"
    case litecoin
    case ethereum

    /// Bitcoin family: outputs and inputs (UTXO); otherwise an account chain.
    public var isUTXO: Bool { self != .ethereum }

    /// Decimals of the coin's smallest unit (satoshi, litoshi, wei).
    public var decimals: Int { self == .ethereum ? 18 : 8 }

    /// The asset currencies that hold this chain's coin.
    public var currencies: Set<String> {
        switch self {
        case .bitcoin: ["BTC"]
        case .bitcoinTestnet: ["BTC", "TBTC"]
        case .litecoin: ["LTC"]
        case .ethereum: ["ETH"]
        }
    }

    /// Base58 version bytes of pay-to-pubkey-hash and pay-to-script-hash addresses.
    var base58Versions: Set<UInt8> {
        switch self {
        case .bitcoin: [0x00, 0x05]
        case .bitcoinTestnet: [0x6F, 0xC4]
        case .litecoin: [0x30, 0x32, 0x05]
        case .ethereum: []
        }
    }

    /// The human-readable part of its segwit (bech32/bech32m) addresses.
    var segwitPrefix: String? {
        switch self {
        case .bitcoin: "bc"
        case .bitcoinTestnet: "tb"
        case .litecoin: "ltc"
        case .ethereum: nil
        }
    }

    /// Version bytes of its extended public keys, by the name users know them by.
    var extendedPublicVersions: [UInt32: String] {
        switch self {
        case .bitcoin: [0x0488_B21E: "xpub", 0x049D_7CB2: "ypub", 0x04B2_4746: "zpub"]
        case .bitcoinTestnet: [0x0435_87CF: "tpub", 0x044A_5262: "upub", 0x045F_1CF6: "vpub"]
        // Litecoin wallets export Ltub/Mtub, and hardware wallets often xpub/zpub.
        case .litecoin: [0x019D_A462: "Ltub", 0x01B2_6EF6: "Mtub", 0x0488_B21E: "xpub", 0x04B2_4746: "zpub"]
        case .ethereum: [:]
        }
    }

    /// Version bytes of extended private keys: recognised only to refuse them plainly.
    static let extendedPrivateVersions: Set<UInt32> = [
        0x0488_ADE4, 0x049D_7878, 0x04B2_430C, 0x0435_8394, 0x044A_4E28, 0x045F_18BC, 0x019D_9CFE, 0x01B2_6792,
    ]

    public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }

    public init(name: String) throws {
        guard let chain = Chain(rawValue: name) else {
            throw DomainError(.invalidWatch, "chain: '\(name)' is not a chain savingsd watches (\(Self.names))", details: ["field": "chain"])
        }
        self = chain
    }
}
