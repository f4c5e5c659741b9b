import Foundation

/// What an asset watches on a chain (SPEC 10): an extended public key or a list of addresses,
/// optionally one ERC-20 token contract, checked before anything is asked of a provider.
public struct WatchTarget: Sendable, Equatable {
    public var chain: Chain
    public var xpub: String?
    public var addresses: [String]
    public var token: String?
    public var minConfirmations: Int

    public static let maxAddresses = 200
    public static let maxConfirmations = 1000

    /// Validates every part; a typo is an `invalid_watch` error naming what is wrong.
    public init(chain: Chain, xpub: String?, addresses: [String], token: String?, minConfirmations: Int = 1) throws {
        self.chain = chain
        guard (xpub == nil) != addresses.isEmpty else {
            throw Self.invalid(xpub == nil ? "addresses" : "xpub", "give either xpub or addresses, not \(xpub == nil ? "neither" : "both")")
        }
        guard addresses.count <= Self.maxAddresses else {
            throw Self.invalid("addresses", "at most \(Self.maxAddresses) addresses; watch a wallet with many through its xpub")
        }
        guard (1...Self.maxConfirmations).contains(minConfirmations) else {
            throw Self.invalid("min_confirmations", "must be between 1 and \(Self.maxConfirmations)")
        }
        self.minConfirmations = minConfirmations
        if let xpub {
            guard chain.isUTXO else { throw Self.invalid("xpub", "an extended public key is for Bitcoin-family chains; watch an \(chain.rawValue) address") }
            self.xpub = try Self.extendedPublicKey(xpub, chain: chain)
        }
        var seen = Set<String>()
        self.addresses = []
        for address in addresses {
            let checked = try Self.address(address, chain: chain, field: "addresses")
            guard seen.insert(chain.isUTXO ? checked : checked.lowercased()).inserted else {
                throw Self.invalid("addresses", "'\(address)' is listed twice")
            }
            self.addresses.append(checked)
        }
        if let token {
            guard chain == .ethereum else { throw Self.invalid("token", "tokens are watched on ethereum, not \(chain.rawValue)") }
            self.token = try Self.ethereumAddress(token, field: "token")
        }
    }

    /// What is watched, for messages: the xpub shortened, or the addresses.
    public var summary: String {
        if let xpub { return Self.shortened(xpub) }
        return addresses.count == 1 ? addresses[0] : "\(addresses.count) addresses"
    }

    /// An extended key as logs show it: its first 8 and last 4 characters.
    public static func shortened(_ key: String) -> String {
        key.count <= 16 ? key : "\(key.prefix(8))…\(key.suffix(4))"
    }

    static func invalid(_ field: String, _ reason: String) -> DomainError {
        DomainError(.invalidWatch, "\(field): \(reason)", details: ["field": field])
    }

    static func extendedPublicKey(_ text: String, chain: Chain) throws -> String {
        let key = text.trimmingCharacters(in: .whitespaces)
        let payload: [UInt8]
        do {
            payload = try Base58Check.decode(key)
        } catch .checksum {
            throw invalid("xpub", "'\(shortened(key))' has a bad checksum (a character mistyped or missing?)")
        } catch .character(let character) {
            throw invalid("xpub", "'\(shortened(key))' has '\(character)', which base58 does not use")
        } catch {
            throw invalid("xpub", "'\(shortened(key))' is not an extended public key")
        }
        guard payload.count == 78 else { throw invalid("xpub", "'\(shortened(key))' is not an extended public key (\(payload.count) bytes, not 78)") }
        let version = payload.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        if Chain.extendedPrivateVersions.contains(version) {
            throw invalid("xpub", "that is an extended PRIVATE key; savingsd only ever needs the public one (xpub/ypub/zpub). Keep the private key secret")
        }
        guard chain.extendedPublicVersions[version] != nil else {
            let other = Chain.allCases.first { $0.extendedPublicVersions[version] != nil }
            let known = chain.extendedPublicVersions.values.sorted().joined(separator: ", ")
            throw invalid("xpub", "'\(shortened(key))' is \(other.map { "a key of \($0.rawValue)" } ?? "of no known chain"), not of \(chain.rawValue) (\(known))")
        }
        guard payload[45] == 0x02 || payload[45] == 0x03 else {
            throw invalid("xpub", "'\(shortened(key))' does not hold a public key")
        }
        return key
    }

    /// Checks one address of the chain; returns it as it will be sent.
    public static func address(_ text: String, chain: Chain, field: String) throws -> String {
        let address = text.trimmingCharacters(in: .whitespaces)
        guard !address.isEmpty else { throw invalid(field, "an address is empty") }
        if chain == .ethereum { return try ethereumAddress(address, field: field) }
        if let prefix = chain.segwitPrefix, address.lowercased().hasPrefix(prefix + "1") {
            return try segwitAddress(address, prefix: prefix, chain: chain, field: field)
        }
        let payload: [UInt8]
        do {
            payload = try Base58Check.decode(address)
        } catch .checksum {
            throw invalid(field, "'\(address)' has a bad checksum (a character mistyped or missing?)")
        } catch {
            let other = Chain.allCases.first { $0 != chain && $0.segwitPrefix.map { address.lowercased().hasPrefix($0 + "1") } == true }
            throw invalid(field, "'\(address)' is not a \(chain.rawValue) address\(other.map { " (it looks like \($0.rawValue))" } ?? "")")
        }
        guard payload.count == 21 else { throw invalid(field, "'\(address)' is not a \(chain.rawValue) address (wrong length)") }
        guard chain.base58Versions.contains(payload[0]) else {
            let other = Chain.allCases.first { $0.base58Versions.contains(payload[0]) }
            throw invalid(field, "'\(address)' is \(other.map { "a \($0.rawValue) address" } ?? "of no known chain"), not \(chain.rawValue)")
        }
        return address
    }

    static func segwitAddress(_ address: String, prefix: String, chain: Chain, field: String) throws -> String {
        let decoded: (prefix: String, data: [UInt8], variant: Bech32.Variant)
        do {
            decoded = try Bech32.decode(address)
        } catch .checksum {
            throw invalid(field, "'\(address)' has a bad checksum (a character mistyped or missing?)")
        } catch .mixedCase {
            throw invalid(field, "'\(address)' mixes upper and lower case")
        } catch .character(let character) {
            throw invalid(field, "'\(address)' has '\(character)', which bech32 does not use")
        } catch {
            throw invalid(field, "'\(address)' is not a \(chain.rawValue) address")
        }
        guard decoded.prefix == prefix, let version = decoded.data.first, version <= 16,
              let program = Bech32.regroup(decoded.data.dropFirst(), from: 5, to: 8, pad: false), (2...40).contains(program.count) else {
            throw invalid(field, "'\(address)' is not a valid \(chain.rawValue) segwit address")
        }
        // Version 0 is bech32 with a 20- or 32-byte program; later versions are bech32m (BIP 350).
        if version == 0 {
            guard decoded.variant == .bech32, program.count == 20 || program.count == 32 else {
                throw invalid(field, "'\(address)' is not a valid \(chain.rawValue) segwit v0 address")
            }
        } else if decoded.variant != .bech32m {
            throw invalid(field, "'\(address)' uses the bech32 checksum where segwit v\(version) needs bech32m")
        }
        return address.lowercased()
    }

    static func ethereumAddress(_ text: String, field: String) throws -> String {
        let address = text.trimmingCharacters(in: .whitespaces)
        let hex = address.utf8.dropFirst(2)
        guard address.hasPrefix("0x"), hex.count == 40,
              hex.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 70) || ($0 >= 97 && $0 <= 102) }) else {
            throw invalid(field, "'\(address)' is not an ethereum address (0x and 40 hexadecimal digits)")
        }
        // Mixed case carries the EIP-55 checksum; all lower or all upper case carries none.
        let digits = String(address.dropFirst(2))
        if digits != digits.lowercased(), digits != digits.uppercased(), digits != checksummed(digits) {
            throw invalid(field, "'\(address)' has a bad checksum (its mixed case does not match EIP-55: a character mistyped?)")
        }
        return address
    }

    /// The EIP-55 form of 40 hex digits: a letter is upper case where the Keccak-256 of the
    /// lower-case digits has a nibble of 8 or more.
    static func checksummed(_ digits: String) -> String {
        let lower = digits.lowercased()
        let hash = Keccak256.hash(Array(lower.utf8))
        return String(lower.enumerated().map { index, character in
            let nibble = index % 2 == 0 ? hash[index / 2] >> 4 : hash[index / 2] & 0x0F
            return character.isLetter && nibble >= 8 ? Character(character.uppercased()) : character
        })
    }
}
