import Foundation
import SavingsRPC
import Synchronization
import Testing
@testable import SavingsDaemon

@Suite struct RenderedGoalsTests {
    /// A goal's JSON is rendered again exactly when its value moved; each goal has its own.
    @Test func rendersAgainOnlyWhenTheValueMoved() {
        let memo = RenderedGoals<Decimal>()
        let renders = Mutex(0)
        func render(_ value: Decimal) -> JSONValue {
            renders.withLock { $0 += 1 }
            return .string("\(value)")
        }
        let first = UUID(), second = UUID()
        #expect(memo.render(first, 1, render) == "1")
        #expect(memo.render(first, Decimal(string: "1.0")!, render) == "1", "an equal value: the same JSON")
        #expect(renders.withLock { $0 } == 1)
        #expect(memo.render(second, 1, render) == "1")
        #expect(renders.withLock { $0 } == 2, "another goal is rendered for itself")
        #expect(memo.render(first, 2, render) == "2")
        #expect(memo.render(first, 1, render) == "1", "the value that moved back is rendered again")
        #expect(renders.withLock { $0 } == 4)
    }
}
