/// Keccak-256 (the original Keccak padding, as Ethereum uses it; not NIST SHA3-256): the hash
/// behind an Ethereum address's mixed-case checksum (EIP-55). swift-crypto has SHA-3's padding
/// only, so the permutation is written here, from the Keccak reference.
enum Keccak256 {
    private static let roundConstants: [UInt64] = [
        0x0000_0000_0000_0001, 0x0000_0000_0000_8082, 0x8000_0000_0000_808A, 0x8000_0000_8000_8000,
        0x0000_0000_0000_808B, 0x0000_0000_8000_0001, 0x8000_0000_8000_8081, 0x8000_0000_0000_8009,
        0x0000_0000_0000_008A, 0x0000_0000_0000_0088, 0x0000_0000_8000_8009, 0x0000_0000_8000_000A,
        0x0000_0000_8000_808B, 0x8000_0000_0000_008B, 0x8000_0000_0000_8089, 0x8000_0000_0000_8003,
        0x8000_0000_0000_8002, 0x8000_0000_0000_0080, 0x0000_0000_0000_800A, 0x8000_0000_8000_000A,
        0x8000_0000_8000_8081, 0x8000_0000_0000_8080, 0x0000_0000_8000_0001, 0x8000_0000_8000_8008,
    ]
    private static let rotations: [UInt64] = [
        0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14,
    ]
    /// Bytes absorbed per block (1088 bits).
    private static let rate = 136

    static func hash(_ message: [UInt8]) -> [UInt8] {
        var state = [UInt64](repeating: 0, count: 25)
        var padded = message
        padded.append(0x01)
        while padded.count % rate != 0 { padded.append(0) }
        padded[padded.count - 1] |= 0x80
        for block in stride(from: 0, to: padded.count, by: rate) {
            for lane in 0..<(rate / 8) {
                var word: UInt64 = 0
                for byte in 0..<8 { word |= UInt64(padded[block + lane * 8 + byte]) << (8 * UInt64(byte)) }
                state[lane] ^= word
            }
            permute(&state)
        }
        var digest: [UInt8] = []
        for lane in 0..<4 { for byte in 0..<8 { digest.append(UInt8(truncatingIfNeeded: state[lane] >> (8 * UInt64(byte)))) } }
        return digest
    }

    private static func rotate(_ value: UInt64, _ by: UInt64) -> UInt64 { by == 0 ? value : (value << by) | (value >> (64 - by)) }

    /// Keccak-f[1600]: θ, ρ and π, χ, ι over 24 rounds; lane (x, y) is `state[x + 5y]`.
    private static func permute(_ a: inout [UInt64]) {
        var b = [UInt64](repeating: 0, count: 25)
        var c = [UInt64](repeating: 0, count: 5)
        for round in 0..<24 {
            for x in 0..<5 { c[x] = a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20] }
            for x in 0..<5 {
                let d = c[(x + 4) % 5] ^ rotate(c[(x + 1) % 5], 1)
                for y in 0..<5 { a[x + 5 * y] ^= d }
            }
            for x in 0..<5 {
                for y in 0..<5 { b[y + 5 * ((2 * x + 3 * y) % 5)] = rotate(a[x + 5 * y], rotations[x + 5 * y]) }
            }
            for x in 0..<5 {
                for y in 0..<5 { a[x + 5 * y] = b[x + 5 * y] ^ (~b[(x + 1) % 5 + 5 * y] & b[(x + 2) % 5 + 5 * y]) }
            }
            a[0] ^= roundConstants[round]
        }
    }
}
