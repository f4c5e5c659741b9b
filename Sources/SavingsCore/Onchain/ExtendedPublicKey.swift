import Crypto

/// An account's extended public key (BIP 32), and the addresses of its receive (0) and change
/// (1) chains: public derivation only (`CKDpub`), each address in the form its version names —
/// xpub/tpub/Ltub pay-to-pubkey-hash, ypub/upub/Mtub P2SH-wrapped segwit (BIP 49), zpub/vpub
/// native segwit (BIP 84). Blockbook derives them itself; Esplora only knows addresses.
public struct ExtendedPublicKey: Sendable {
    public enum AddressKind: Sendable {
        case payToPubkeyHash
        case wrappedSegwit
        case nativeSegwit
    }

    public let chain: Chain
    public let kind: AddressKind
    let key: [UInt8]
    let chainCode: [UInt8]

    /// Reads a key already checked by `WatchTarget`.
    public init(_ text: String, chain: Chain) throws {
        let payload: [UInt8]
        do {
            payload = try Base58Check.decode(text)
        } catch {
            throw WatchTarget.invalid("xpub", "not an extended public key")
        }
        let version = payload.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard payload.count == 78, let name = chain.extendedPublicVersions[version] else {
            throw WatchTarget.invalid("xpub", "not an extended public key of \(chain.rawValue)")
        }
        self.chain = chain
        switch name.first {
        case "y", "u", "M": kind = .wrappedSegwit
        case "z", "v": kind = .nativeSegwit
        default: kind = .payToPubkeyHash
        }
        chainCode = Array(payload[13..<45])
        key = Array(payload[45..<78])
    }

    private init(chain: Chain, kind: AddressKind, key: [UInt8], chainCode: [UInt8]) {
        self.chain = chain
        self.kind = kind
        self.key = key
        self.chainCode = chainCode
    }

    /// The non-hardened child `index` (CKDpub): K_i = IL·G + K.
    public func child(_ index: UInt32) throws -> ExtendedPublicKey {
        let data = key + (0..<4).map { UInt8(truncatingIfNeeded: index >> (8 * (3 - $0))) }
        let digest = Array(HMAC<SHA512>.authenticationCode(for: data, using: SymmetricKey(data: chainCode)))
        let tweak = Array(digest[0..<32])
        guard let parent = Secp256k1.Point(compressed: key), tweak.lexicographicallyPrecedes(Secp256k1.order),
              let child = (Secp256k1.Point.generator.times(tweak) + parent).compressed else {
            throw WatchTarget.invalid("xpub", "key \(index) cannot be derived (skip it)")
        }
        return ExtendedPublicKey(chain: chain, kind: kind, key: child, chainCode: Array(digest[32..<64]))
    }

    /// The address at `chain`/`index` below this account key (0: receive, 1: change).
    public func address(change: UInt32, index: UInt32) throws -> String {
        try child(change).child(index).address
    }

    /// This key's own address.
    public var address: String {
        let hash = Self.hash160(key)
        switch kind {
        case .payToPubkeyHash: return Base58Check.encode([chain.payToPubkeyHashVersion] + hash)
        case .wrappedSegwit: return Base58Check.encode([chain.payToScriptHashVersion] + Self.hash160([0x00, 0x14] + hash))
        case .nativeSegwit: return Bech32.segwitAddress(prefix: chain.segwitPrefix ?? "", version: 0, program: hash)
        }
    }

    static func hash160(_ bytes: [UInt8]) -> [UInt8] { RIPEMD160.hash(Array(SHA256.hash(data: bytes))) }
}

extension Chain {
    var payToPubkeyHashVersion: UInt8 {
        switch self {
        case .bitcoin, .ethereum: 0x00
        case .bitcoinTestnet: 0x6F
        case .litecoin: 0x30
        }
    }

    var payToScriptHashVersion: UInt8 {
        switch self {
        case .bitcoin, .ethereum: 0x05
        case .bitcoinTestnet: 0xC4
        case .litecoin: 0x32
        }
    }
}

extension Base58Check {
    static func encode(_ payload: [UInt8]) -> String {
        let alphabet = Array("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz")
        let bytes = payload + checksum(payload)
        var digits: [Int] = []  // base 58, little-endian
        for byte in bytes {
            var carry = Int(byte)
            for index in digits.indices {
                carry += digits[index] << 8
                digits[index] = carry % 58
                carry /= 58
            }
            while carry > 0 {
                digits.append(carry % 58)
                carry /= 58
            }
        }
        let zeros = bytes.prefix { $0 == 0 }.count
        return String(repeating: "1", count: zeros) + String(digits.reversed().map { alphabet[$0] })
    }
}

extension Bech32 {
    /// A segwit address (version 0: bech32; later: bech32m).
    static func segwitAddress(prefix: String, version: UInt8, program: [UInt8]) -> String {
        let charset = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l")
        let data = [version] + (regroup(program, from: 8, to: 5, pad: true) ?? [])
        let constant = (version == 0 ? Variant.bech32 : Variant.bech32m).constant
        let check = polymod(expand(prefix) + data + [0, 0, 0, 0, 0, 0]) ^ constant
        let checksum = (0..<6).map { UInt8((check >> (5 * (5 - UInt32($0)))) & 31) }
        return prefix + "1" + String((data + checksum).map { charset[Int($0)] })
    }
}
