/// The secp256k1 curve, public-key side only (BIP 32 public derivation needs `k·G + K`):
/// field arithmetic modulo p = 2^256 − 2^32 − 977 on four 64-bit limbs, points in Jacobian
/// coordinates. No secret ever goes through it, so it need not run in constant time.
enum Secp256k1 {
    /// A field element, little-endian limbs, always reduced below p.
    struct Field: Equatable {
        var limbs: (UInt64, UInt64, UInt64, UInt64)

        static let p = Field(limbs: (0xFFFF_FFFE_FFFF_FC2F, .max, .max, .max))
        static let zero = Field(limbs: (0, 0, 0, 0))
        static let one = Field(limbs: (1, 0, 0, 0))

        init(limbs: (UInt64, UInt64, UInt64, UInt64)) { self.limbs = limbs }

        static func == (a: Field, b: Field) -> Bool { a.limbs == b.limbs }

        /// From 32 big-endian bytes (nil when not below p).
        init?(bytes: ArraySlice<UInt8>) {
            var words = [UInt64](repeating: 0, count: 4)
            for (index, byte) in bytes.enumerated() { words[3 - index / 8] |= UInt64(byte) << (8 * UInt64(7 - index % 8)) }
            limbs = (words[0], words[1], words[2], words[3])
            guard Self.less(self, Self.p) else { return nil }
        }

        var bytes: [UInt8] {
            let words = [limbs.3, limbs.2, limbs.1, limbs.0]
            return words.flatMap { word in (0..<8).map { UInt8(truncatingIfNeeded: word >> (8 * UInt64(7 - $0))) } }
        }

        var words: [UInt64] { [limbs.0, limbs.1, limbs.2, limbs.3] }
        init(words w: [UInt64]) { limbs = (w[0], w[1], w[2], w[3]) }

        var isOdd: Bool { limbs.0 & 1 == 1 }
        var isZero: Bool { self == .zero }

        static func less(_ a: Field, _ b: Field) -> Bool {
            for (x, y) in zip(a.words.reversed(), b.words.reversed()) where x != y { return x < y }
            return false
        }

        /// a + b over 256 bits; the carry out.
        private static func addRaw(_ a: [UInt64], _ b: [UInt64]) -> ([UInt64], Bool) {
            var sum = [UInt64](repeating: 0, count: 4)
            var carry: UInt64 = 0
            for index in 0..<4 {
                let (s1, o1) = a[index].addingReportingOverflow(b[index])
                let (s2, o2) = s1.addingReportingOverflow(carry)
                sum[index] = s2
                carry = (o1 ? 1 : 0) + (o2 ? 1 : 0)
            }
            return (sum, carry != 0)
        }

        private static func subRaw(_ a: [UInt64], _ b: [UInt64]) -> ([UInt64], Bool) {
            var difference = [UInt64](repeating: 0, count: 4)
            var borrow: UInt64 = 0
            for index in 0..<4 {
                let (d1, o1) = a[index].subtractingReportingOverflow(b[index])
                let (d2, o2) = d1.subtractingReportingOverflow(borrow)
                difference[index] = d2
                borrow = (o1 ? 1 : 0) + (o2 ? 1 : 0)
            }
            return (difference, borrow != 0)
        }

        /// 2^256 mod p: what a carry out of 256 bits is worth.
        private static let fold: UInt64 = 0x1_0000_03D1

        static func + (a: Field, b: Field) -> Field {
            var (sum, carry) = addRaw(a.words, b.words)
            if carry { sum = addRaw(sum, [fold, 0, 0, 0]).0 }
            var result = Field(words: sum)
            if !less(result, p) { result = Field(words: subRaw(result.words, p.words).0) }
            return result
        }

        static func - (a: Field, b: Field) -> Field {
            let (difference, borrow) = subRaw(a.words, b.words)
            return borrow ? Field(words: addRaw(difference, p.words).0) : Field(words: difference)
        }

        static func * (a: Field, b: Field) -> Field {
            // The 512-bit product, then its upper half folded in twice (2^256 ≡ 0x1000003D1).
            var product = [UInt64](repeating: 0, count: 8)
            let x = a.words, y = b.words
            for i in 0..<4 {
                var carry: UInt64 = 0
                for j in 0..<4 {
                    let (high, low) = x[i].multipliedFullWidth(by: y[j])
                    let (s1, o1) = product[i + j].addingReportingOverflow(low)
                    let (s2, o2) = s1.addingReportingOverflow(carry)
                    product[i + j] = s2
                    carry = high &+ (o1 ? 1 : 0) &+ (o2 ? 1 : 0)
                }
                product[i + 4] = carry
            }
            var low = Array(product[0..<4])
            var high = Array(product[4..<8])
            for _ in 0..<2 {
                var folded = [UInt64](repeating: 0, count: 5)
                var carry: UInt64 = 0
                for index in 0..<4 {
                    let (h, l) = high[index].multipliedFullWidth(by: fold)
                    let (s, o) = l.addingReportingOverflow(carry)
                    folded[index] = s
                    carry = h &+ (o ? 1 : 0)
                }
                folded[4] = carry
                let (sum, overflow) = addRaw(low, Array(folded[0..<4]))
                low = sum
                high = [folded[4] &+ (overflow ? 1 : 0), 0, 0, 0]
            }
            if high[0] != 0 { low = addRaw(low, [high[0] &* fold, 0, 0, 0]).0 }
            var result = Field(words: low)
            if !less(result, p) { result = Field(words: subRaw(result.words, p.words).0) }
            return result
        }

        func power(_ exponent: [UInt64]) -> Field {
            var result = Field.one
            for word in exponent.reversed() {
                for bit in (0..<64).reversed() {
                    result = result * result
                    if (word >> UInt64(bit)) & 1 == 1 { result = result * self }
                }
            }
            return result
        }

        var inverse: Field { power(Self.subRaw(Self.p.words, [2, 0, 0, 0]).0) }

        /// A square root (p ≡ 3 mod 4: the (p + 1) / 4 power), nil when there is none.
        var squareRoot: Field? {
            // (p + 1) / 4 = 0x3FFF…FBFFFFF0C
            let root = power([0xFFFF_FFFF_BFFF_FF0C, .max, .max, 0x3FFF_FFFF_FFFF_FFFF])
            return root * root == self ? root : nil
        }
    }

    /// A point in Jacobian coordinates (x = X/Z², y = Y/Z³); Z = 0 is the point at infinity.
    struct Point {
        var x: Field, y: Field, z: Field

        static let infinity = Point(x: .one, y: .one, z: .zero)
        static let generator = Point(
            x: Field(bytes: hex("79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798")[...])!,
            y: Field(bytes: hex("483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8")[...])!, z: .one)

        var isInfinity: Bool { z.isZero }

        func doubled() -> Point {
            guard !isInfinity, !y.isZero else { return .infinity }
            let ySquared = y * y
            let s = (x * ySquared) + (x * ySquared) + (x * ySquared) + (x * ySquared)
            let xSquared = x * x
            let m = xSquared + xSquared + xSquared
            let newX = m * m - s - s
            let yFour = ySquared * ySquared
            let eight = yFour + yFour + yFour + yFour + yFour + yFour + yFour + yFour
            let newY = m * (s - newX) - eight
            let newZ = (y * z) + (y * z)
            return Point(x: newX, y: newY, z: newZ)
        }

        static func + (a: Point, b: Point) -> Point {
            if a.isInfinity { return b }
            if b.isInfinity { return a }
            let z1Squared = a.z * a.z, z2Squared = b.z * b.z
            let u1 = a.x * z2Squared, u2 = b.x * z1Squared
            let s1 = a.y * z2Squared * b.z, s2 = b.y * z1Squared * a.z
            if u1 == u2 { return s1 == s2 ? a.doubled() : .infinity }
            let h = u2 - u1, r = s2 - s1
            let hSquared = h * h, hCubed = hSquared * h
            let u1hSquared = u1 * hSquared
            let x = r * r - hCubed - u1hSquared - u1hSquared
            let y = r * (u1hSquared - x) - s1 * hCubed
            return Point(x: x, y: y, z: h * a.z * b.z)
        }

        /// k·self for a 256-bit big-endian scalar.
        func times(_ scalar: [UInt8]) -> Point {
            var result = Point.infinity
            for byte in scalar {
                for bit in (0..<8).reversed() {
                    result = result.doubled()
                    if (byte >> UInt8(bit)) & 1 == 1 { result = result + self }
                }
            }
            return result
        }

        /// The 33-byte compressed form (SEC 1).
        var compressed: [UInt8]? {
            guard !isInfinity else { return nil }
            let zInverse = z.inverse
            let zInverseSquared = zInverse * zInverse
            let affineX = x * zInverseSquared, affineY = y * zInverseSquared * zInverse
            return [affineY.isOdd ? 0x03 : 0x02] + affineX.bytes
        }

        /// From a compressed public key.
        init?(compressed key: [UInt8]) {
            guard key.count == 33, key[0] == 0x02 || key[0] == 0x03, let x = Field(bytes: key[1...]) else { return nil }
            let seven = Field(limbs: (7, 0, 0, 0))
            guard let root = (x * x * x + seven).squareRoot else { return nil }
            let y = root.isOdd == (key[0] == 0x03) ? root : Field.zero - root
            self.init(x: x, y: y, z: .one)
        }

        init(x: Field, y: Field, z: Field) {
            self.x = x
            self.y = y
            self.z = z
        }
    }

    /// The group order n, big-endian.
    static let order = hex("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141")

    static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }
}
