import Foundation
import SavingsCore

/// How ids and decoding failures are represented in storage.
enum StoreKey {
    /// Ids are stored as lower-case UUID text (written digit by digit: every new row's id goes
    /// through here, and Foundation's upper-case text lowered again costs two allocations).
    static func id(_ uuid: UUID) -> String {
        withUnsafeBytes(of: uuid.uuid) { raw in
            String(unsafeUninitializedCapacity: 36) { buffer in
                let hex: StaticString = "0123456789abcdef"
                var index = 0
                for position in 0..<16 {
                    if position == 4 || position == 6 || position == 8 || position == 10 {
                        buffer[index] = 0x2D
                        index += 1
                    }
                    buffer[index] = hex.utf8Start[Int(raw[position] >> 4)]
                    buffer[index + 1] = hex.utf8Start[Int(raw[position] & 0x0F)]
                    index += 2
                }
                return index
            }
        }
    }

    /// The 16 bytes of an id, as `uuid` columns keep them.
    static func bytes(_ uuid: UUID) -> Data { withUnsafeBytes(of: uuid.uuid) { Data($0) } }

    /// A row's public id: its stored bytes, or the id derived from its ref (a transaction's
    /// unless another table's `scheme` is given).
    static func publicID(ref: Int64, stored: Data?, scheme: DerivedID = DerivedID.transactions) throws -> UUID {
        guard let stored else { return scheme.derived(ref: ref) }
        guard stored.count == 16 else { throw StoreError.corrupt("id of row \(ref) has \(stored.count) bytes") }
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &value) { raw in raw.copyBytes(from: stored) }
        return UUID(uuid: value)
    }

    static func uuid(_ text: String) throws -> UUID {
        guard let uuid = parseCanonical(text) ?? UUID(uuidString: text) else { throw StoreError.corrupt("id \(text)") }
        return uuid
    }

    /// The stored form (36 characters, hex in 8-4-4-4-12 groups) read byte by byte: every
    /// row's id goes through here, and Foundation's parser is slow on Linux.
    static func parseCanonical(_ text: String) -> UUID? {
        var text = text
        return text.withUTF8 { bytes -> UUID? in
            guard bytes.count == 36, bytes[8] == 0x2D, bytes[13] == 0x2D, bytes[18] == 0x2D, bytes[23] == 0x2D else { return nil }
            func nibble(_ byte: UInt8) -> UInt8? {
                switch byte {
                case 0x30...0x39: byte - 0x30
                case 0x61...0x66: byte - 0x61 + 10
                case 0x41...0x46: byte - 0x41 + 10
                default: nil
                }
            }
            var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            var index = 0
            let complete = withUnsafeMutableBytes(of: &value) { raw -> Bool in
                for position in 0..<16 {
                    if index == 8 || index == 13 || index == 18 || index == 23 { index += 1 }
                    guard let high = nibble(bytes[index]), let low = nibble(bytes[index + 1]) else { return false }
                    raw[position] = high << 4 | low
                    index += 2
                }
                return true
            }
            return complete ? UUID(uuid: value) : nil
        }
    }

    /// Runs a row conversion; anything that does not parse is reported as corruption.
    static func decoding<T>(_ what: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.corrupt("\(what): \(error)")
        }
    }
}
