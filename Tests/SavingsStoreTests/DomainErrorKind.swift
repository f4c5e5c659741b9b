import SavingsCore

/// The kind of domain error `body` throws, or nil when it succeeds or throws something else.
func kind(_ body: () async throws -> Void) async -> DomainError.Kind? {
    do {
        try await body()
        return nil
    } catch let error as DomainError {
        return error.kind
    } catch {
        return nil
    }
}
