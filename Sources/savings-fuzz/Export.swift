import Foundation
import SavingsDaemon
import SavingsRPC
import SavingsStore

/// `export`: a document given to `data.import` (a file or an upload), read by
/// `ExportDocument.read`. What it accepts must read the same again once written as the export
/// writes rows.
enum ExportTarget {
    static let target = FuzzTarget("export", run: run)

    static func run(_ input: UnsafeRawBufferPointer) {
        let sections: [String: [TransferRow]]
        do {
            sections = try ExportDocument.read(Data(input), name: "the upload", field: "upload")
        } catch {
            trace("export: \(error)")
            return
        }
        trace("export: \(sections.map { "\($0.key): \($0.value.count)" }.sorted())")
        var document: [String: JSONValue] = ["format": "savingsd-export", "version": 1]
        for (name, rows) in sections { document[name] = .array(rows.map(ExportDocument.json)) }
        let written = Data(JSONSerializer.bytes(.object(document)))
        do {
            let again = try ExportDocument.read(written, name: "the export", field: "path")
            guard again == sections else { finding("a document read, written and read again differs") }
        } catch {
            finding("a document read and written again is refused: \(error)")
        }
    }
}
