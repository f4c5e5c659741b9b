import Foundation
import SavingsRPC
#if canImport(Glibc)
import Glibc
#endif

/// Every result the integration tests receive, one JSON line `{"method", "result"}` each, in the
/// file `SAVINGSD_ANSWERS` names (set by `make test`): `Tests/schema/answers.py` checks each
/// against its method's result schema in `rpc.discover`.
enum AnswerLog {
    private static let descriptor: Int32? = {
        guard let path = ProcessInfo.processInfo.environment["SAVINGSD_ANSWERS"], !path.isEmpty else { return nil }
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        return fd >= 0 ? fd : nil
    }()

    /// Appends one answer; with O_APPEND each line is one write, whole, whatever runs beside it.
    static func record(_ method: String, _ result: JSONValue) {
        guard let descriptor else { return }
        let line = Array((JSONSerializer.serialize(["method": .string(method), "result": result]) + "\n").utf8)
        _ = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }
}
