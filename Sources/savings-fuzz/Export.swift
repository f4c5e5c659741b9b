import Foundation
import SavingsDaemon
import SavingsStore

/// `export`: a document given to `data.import` (a file or an upload), read as `data.import`
/// reads it before writing anything: streamed a chunk and a row at a time, every row of every
/// section checked against the schema of a new database.
enum ExportTarget {
    static let target = FuzzTarget("export", run: run)
    /// The check of a new database's schema, made once.
    static let start: TransferDocumentCheck = blocking {
        try! await SavingsDatabase.inMemory().transferDocumentCheck()
    }
    /// Where each input is put for the reader, which reads files.
    static let path = NSTemporaryDirectory() + "savings-fuzz-export-\(getpid()).json"

    static func run(_ input: UnsafeRawBufferPointer) {
        guard FileManager.default.createFile(atPath: path, contents: Data(input)) else { finding("cannot write \(path)") }
        defer { unlink(path) }
        do {
            let counts = try ExportDocument.checkedCounts(.path(path), start)
            trace("export: \(counts.sorted { $0.key < $1.key })")
        } catch {
            trace("export: \(error)")
        }
    }
}
