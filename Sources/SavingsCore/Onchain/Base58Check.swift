import Crypto

/// Base58Check: Bitcoin's base58 alphabet with a four-byte double-SHA-256 checksum.
enum Base58Check {
    private static let alphabet = Array("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz".utf8)
    private static let values: [Int8] = {
        var table = [Int8](repeating: -1, count: 128)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = Int8(index) }
        return table
    }()

    enum Failure: Error, Equatable {
        case character(Character)
        case checksum
        case tooShort
    }

    /// The payload (checksum removed and verified).
    static func decode(_ text: String) throws(Failure) -> [UInt8] {
        var bytes: [UInt8] = []  // big-endian, without the leading zeros
        for scalar in text.unicodeScalars {
            guard scalar.value < 128, case let digit = values[Int(scalar.value)], digit >= 0 else {
                throw .character(Character(scalar))
            }
            var carry = Int(digit)
            for index in bytes.indices.reversed() {
                carry += Int(bytes[index]) * 58
                bytes[index] = UInt8(carry & 0xFF)
                carry >>= 8
            }
            while carry > 0 {
                bytes.insert(UInt8(carry & 0xFF), at: 0)
                carry >>= 8
            }
        }
        let zeros = text.utf8.prefix(while: { $0 == UInt8(ascii: "1") }).count
        let decoded = [UInt8](repeating: 0, count: zeros) + bytes
        guard decoded.count > 4 else { throw .tooShort }
        let payload = Array(decoded.dropLast(4))
        guard Array(checksum(payload)) == Array(decoded.suffix(4)) else { throw .checksum }
        return payload
    }

    static func checksum(_ payload: [UInt8]) -> ArraySlice<UInt8> {
        Array(SHA256.hash(data: Array(SHA256.hash(data: payload)))).prefix(4)
    }
}

/// Bech32 (BIP 173) and bech32m (BIP 350), over the reference polymod.
enum Bech32 {
    enum Variant: Equatable {
        case bech32
        case bech32m

        var constant: UInt32 { self == .bech32 ? 1 : 0x2BC8_30A3 }
    }

    private static let charset = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)

    enum Failure: Error, Equatable {
        case mixedCase
        case noSeparator
        case character(Character)
        case checksum
        case length
    }

    static func polymod(_ values: [UInt8]) -> UInt32 {
        let generator: [UInt32] = [0x3B6A_57B2, 0x2650_8E6D, 0x1EA1_19FA, 0x3D42_33DD, 0x2A14_62B3]
        var check: UInt32 = 1
        for value in values {
            let top = check >> 25
            check = (check & 0x1FF_FFFF) << 5 ^ UInt32(value)
            for bit in 0..<5 where (top >> bit) & 1 == 1 { check ^= generator[bit] }
        }
        return check
    }

    static func expand(_ prefix: String) -> [UInt8] {
        let bytes = Array(prefix.utf8)
        return bytes.map { $0 >> 5 } + [0] + bytes.map { $0 & 31 }
    }

    /// The prefix, the 5-bit data (checksum removed) and which checksum it carries.
    static func decode(_ text: String) throws(Failure) -> (prefix: String, data: [UInt8], variant: Variant) {
        guard text.utf8.count <= 90 else { throw .length }
        let lower = text.lowercased()
        guard text == lower || text == text.uppercased() else { throw .mixedCase }
        guard let separator = lower.lastIndex(of: "1") else { throw .noSeparator }
        let prefix = String(lower[..<separator])
        let rest = lower[lower.index(after: separator)...]
        guard !prefix.isEmpty, rest.utf8.count >= 6 else { throw .length }
        var data: [UInt8] = []
        for character in rest {
            guard let ascii = character.asciiValue, let value = charset.firstIndex(of: ascii) else { throw .character(character) }
            data.append(UInt8(value))
        }
        let variant: Variant
        switch polymod(expand(prefix) + data) {
        case Variant.bech32.constant: variant = .bech32
        case Variant.bech32m.constant: variant = .bech32m
        default: throw .checksum
        }
        return (prefix, Array(data.dropLast(6)), variant)
    }

    /// Regroups bits (BIP 173's convertbits): 5-bit groups to bytes refusing non-zero padding, or
    /// bytes to 5-bit groups padding the last one.
    static func regroup(_ data: some Sequence<UInt8>, from: Int, to: Int, pad: Bool) -> [UInt8]? {
        var accumulator = 0, bits = 0
        var result: [UInt8] = []
        let mask = (1 << to) - 1
        for value in data {
            accumulator = ((accumulator << from) | Int(value)) & 0xFFF
            bits += from
            while bits >= to {
                bits -= to
                result.append(UInt8((accumulator >> bits) & mask))
            }
        }
        if pad {
            if bits > 0 { result.append(UInt8((accumulator << (to - bits)) & mask)) }
        } else {
            guard bits < from, accumulator & ((1 << bits) - 1) == 0 else { return nil }
        }
        return result
    }
}
