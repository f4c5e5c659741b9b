import Dispatch

/// Work whose length the caller's input decides (reading a file through rules, parsing a
/// provider's answer) runs on a thread of its own, not on the cooperative pool that serves
/// every client's requests: however long it takes, other requests go on.
public enum OffPool {
    private static let queue = DispatchQueue(label: "savingsd.bounded-work", qos: .utility, attributes: .concurrent)

    public static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try work() })
            }
        }
    }
}
