import SavingsCLI
import SavingsRPC
import Testing

@Suite struct HintsTests {
    static func domain(_ kind: String, _ data: [String: JSONValue] = [:]) -> RPCError {
        RPCError(code: RPCError.domainErrorCode, message: "m", data: .object(data.merging(["kind": .string(kind)]) { a, _ in a }))
    }

    @Test func everyDomainErrorKindSaysWhatToDoNext() {
        let kinds = ["not_found", "ambiguous", "invalid_amount", "insufficient_balance", "conflict", "plan_locked", "invalid_state",
                     "undo_expired", "rate_unavailable", "permission_denied", "read_only", "too_large", "storage_error", "busy", "invalid_field"]
        for kind in kinds {
            #expect(Hints.hint(for: Self.domain(kind), method: "goal.get") != nil, "no hint for \(kind)")
        }
        for code in [RPCError.methodNotFoundCode, RPCError.invalidParamsCode, RPCError.internalErrorCode] {
            #expect(Hints.hint(for: RPCError(code: code, message: "m"), method: "x.y") != nil)
        }
    }

    @Test func hintsFitTheMethod() {
        #expect(Hints.message(for: Self.domain("not_found"), method: "goal.get") == "m [not_found]\n  next: see the goals with: savingsctl goal list --all")
        #expect(Hints.hint(for: Self.domain("not_found"), method: "asset.get")!.contains("savingsctl asset list"))
        #expect(Hints.hint(for: Self.domain("not_found"), method: "month.progress")!.contains("savingsctl month start"))
        #expect(Hints.hint(for: Self.domain("insufficient_balance", ["available": "6300"]), method: "allocation.set")!.contains("available: 6300"))
        #expect(Hints.hint(for: Self.domain("invalid_field", ["field": "deadline"]), method: "goal.create")!.contains("'deadline'"))
        #expect(Hints.hint(for: Self.domain("conflict"), method: "data.import")!.contains("--replace"))
        #expect(Hints.hint(for: Self.domain("permission_denied", ["field": "path"]), method: "tx.import")!.contains("let savingsctl send"))
        #expect(Hints.hint(for: Self.domain("permission_denied"), method: "goal.list")!.contains("rpc.allow_uids"))
    }
}
