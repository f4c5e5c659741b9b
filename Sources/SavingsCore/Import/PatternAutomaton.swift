/// A rules pattern compiled to instructions (`Compiler`) and run over a text with every path in
/// step (`Simulation`), bounded by `RowPattern.maxSteps`.
enum Instruction {
    case scalar(Unicode.Scalar)
    case any
    case set(Int)
    case split(Int, Int)
    case jump(Int)
    case lineStart
    case lineEnd
    case wordBoundary(Bool)
    /// Continue only where the look-ahead program `Int` matches (or, negative, does not).
    case lookAhead(Int, negative: Bool)
    /// Records the position in capture slot `Int` (group n opens at 2n, closes at 2n + 1).
    case save(Int)
    case match
}

final class Program: Sendable {
    /// The main program is `programs[0]`; look-aheads follow.
    let programs: [[Instruction]]
    let sets: [PatternClass]

    init(_ tree: Node) throws {
        var compiler = Compiler()
        _ = try compiler.program(tree)
        programs = compiler.programs
        sets = compiler.sets
    }
}

extension PatternClass: @unchecked Sendable {}
extension Instruction: @unchecked Sendable {}

struct Compiler {
    var programs: [[Instruction]] = []
    var sets: [PatternClass] = []
    var total = 0

    /// Compiles `tree` into a new program of its own; returns its number.
    mutating func program(_ tree: Node) throws -> Int {
        let number = programs.count
        programs.append([])
        var code: [Instruction] = []
        try emit(tree, into: &code)
        code.append(.match)
        programs[number] = code
        return number
    }

    mutating func emit(_ node: Node, into code: inout [Instruction]) throws {
        total += 1
        guard code.count + total < RowPattern.maxInstructions * 2, code.count < RowPattern.maxInstructions else {
            throw PatternParser.Failure(reason: "it would need more than \(RowPattern.maxInstructions) steps of automaton; repeat less")
        }
        switch node {
        case .empty: break
        case .scalar(let scalar): code.append(.scalar(scalar))
        case .any: code.append(.any)
        case .set(let set):
            sets.append(set)
            code.append(.set(sets.count - 1))
        case .lineStart: code.append(.lineStart)
        case .lineEnd: code.append(.lineEnd)
        case .wordBoundary(let yes): code.append(.wordBoundary(yes))
        case .concat(let items):
            for item in items { try emit(item, into: &code) }
        case .alternation(let branches):
            // split L1, next; L1: branch; jump end; next: split L2, … ; last branch.
            var jumps: [Int] = []
            for (number, branch) in branches.enumerated() {
                if number < branches.count - 1 {
                    let split = code.count
                    code.append(.split(split + 1, 0))
                    try emit(branch, into: &code)
                    jumps.append(code.count)
                    code.append(.jump(0))
                    code[split] = .split(split + 1, code.count)
                } else {
                    try emit(branch, into: &code)
                }
            }
            for jump in jumps { code[jump] = .jump(code.count) }
        case .repeated(let body, let min, let max, let lazy):
            /// A split that prefers going on (greedy) or leaving (lazy).
            func choice(_ on: Int, _ out: Int) -> Instruction { lazy ? .split(out, on) : .split(on, out) }
            for _ in 0..<min { try emit(body, into: &code) }
            if let max {
                // Each optional copy: split into it or past every remaining one.
                var splits: [Int] = []
                for _ in min..<max {
                    splits.append(code.count)
                    code.append(.split(code.count + 1, 0))
                    try emit(body, into: &code)
                }
                for split in splits { code[split] = choice(split + 1, code.count) }
            } else {
                // loop: split body, out; body; jump loop.
                let loop = code.count
                code.append(.split(loop + 1, 0))
                try emit(body, into: &code)
                code.append(.jump(loop))
                code[loop] = choice(loop + 1, code.count)
            }
        case .lookAhead(let inner, let negative):
            let number = try program(inner)
            code.append(.lookAhead(number, negative: negative))
        case .capture(let inner, let number):
            code.append(.save(2 * number))
            try emit(inner, into: &code)
            code.append(.save(2 * number + 1))
        }
    }
}

/// One run of the automaton over a text: the set of instructions alive at each position,
/// advanced together.
struct Simulation {
    let program: Program
    let text: [Unicode.Scalar]
    var steps = 0
    /// Look-ahead results by program and position, each worked out once.
    var looks: [Int: [Int: Bool]] = [:]

    init(program: Program, text: [Unicode.Scalar]) {
        self.program = program
        self.text = text
    }

    mutating func search() throws -> Bool {
        try run(0, from: 0, anchored: false)
    }

    /// Whether program `number` matches starting at `from` (anchored), or anywhere after it.
    mutating func run(_ number: Int, from start: Int, anchored: Bool) throws -> Bool {
        let code = program.programs[number]
        var current = SparseSet(capacity: code.count)
        var next = SparseSet(capacity: code.count)
        // One stack for every walk of this run's instructions (a look-ahead's run has its own).
        var stack: [Int] = []
        stack.reserveCapacity(code.count)
        var position = start
        if try add(0, code: code, at: position, to: &current, stack: &stack) { return true }
        while position < text.count {
            let scalar = Folding.fold(text[position])
            let original = text[position]
            next.clear()
            for slot in 0..<current.count {
                let pc = current[slot]
                steps += 1
                switch code[pc] {
                case .scalar(let wanted):
                    if wanted == scalar, try add(pc + 1, code: code, at: position + 1, to: &next, stack: &stack) { return true }
                case .any:
                    if original != "\n", original != "\r", try add(pc + 1, code: code, at: position + 1, to: &next, stack: &stack) { return true }
                case .set(let index):
                    if program.sets[index].contains(original), try add(pc + 1, code: code, at: position + 1, to: &next, stack: &stack) { return true }
                default:
                    break
                }
            }
            guard steps <= RowPattern.maxSteps else { throw RowPattern.StepLimit() }
            position += 1
            swap(&current, &next)
            if !anchored, try add(0, code: code, at: position, to: &current, stack: &stack) { return true }
            if anchored, current.members.isEmpty { return false }
            if !anchored, current.members.isEmpty, position >= text.count { break }
        }
        return false
    }

    /// Adds `pc` and what it leads to without reading a character; true when that reaches `match`.
    mutating func add(_ pc: Int, code: [Instruction], at position: Int, to set: inout SparseSet, stack: inout [Int]) throws -> Bool {
        stack.removeAll(keepingCapacity: true)
        stack.append(pc)
        while let pc = stack.popLast() {
            guard set.insert(pc) else { continue }
            steps += 1
            switch code[pc] {
            case .match: return true
            case .jump(let target): stack.append(target)
            case .save: stack.append(pc + 1)
            case .split(let first, let second):
                stack.append(second)
                stack.append(first)
            case .lineStart:
                if position == 0 { stack.append(pc + 1) }
            case .lineEnd:
                if position == text.count || (position == text.count - 1 && text[position] == "\n") { stack.append(pc + 1) }
            case .wordBoundary(let wanted):
                func word(_ index: Int) -> Bool { index >= 0 && index < text.count && PatternClass.isNamed(.word, text[index].value) }
                if (word(position - 1) != word(position)) == wanted { stack.append(pc + 1) }
            case .lookAhead(let number, let negative):
                let found: Bool
                if let known = looks[number]?[position] {
                    found = known
                } else {
                    found = try run(number, from: position, anchored: true)
                    looks[number, default: [:]][position] = found
                }
                if found != negative { stack.append(pc + 1) }
            case .scalar, .any, .set:
                break
            }
        }
        guard steps <= RowPattern.maxSteps else { throw RowPattern.StepLimit() }
        return false
    }

    /// Whether `pc` may go on at `position` without reading (an assertion that holds).
    private mutating func holds(_ instruction: Instruction, at position: Int) throws -> Bool {
        switch instruction {
        case .lineStart: return position == 0
        case .lineEnd: return position == text.count || (position == text.count - 1 && text[position] == "\n")
        case .wordBoundary(let wanted):
            func word(_ index: Int) -> Bool { index >= 0 && index < text.count && PatternClass.isNamed(.word, text[index].value) }
            return (word(position - 1) != word(position)) == wanted
        case .lookAhead(let number, let negative):
            if let known = looks[number]?[position] { return known != negative }
            let found = try run(number, from: position, anchored: true)
            looks[number, default: [:]][position] = found
            return found != negative
        default: return true
        }
    }

    /// The leftmost match's capture slots (positions in `text`, -1 where a group took no part),
    /// preferring earlier alternatives and greedy repeats as backtracking engines do, found with
    /// every path in step (a Pike VM): each thread carries its slots, and a thread that matches
    /// ends those of lower priority. Nil when the pattern does not match.
    mutating func captures(slots: Int) throws -> [Int]? {
        let code = program.programs[0]
        var current: [(pc: Int, slots: [Int])] = []
        var next: [(pc: Int, slots: [Int])] = []
        var seen = SparseSet(capacity: code.count)
        var stack: [(pc: Int, slots: [Int])] = []
        var matched: [Int]?
        /// Adds the threads `pc` leads to at `position`, in priority order.
        func add(_ pc: Int, _ slots: [Int], at position: Int, to list: inout [(pc: Int, slots: [Int])]) throws {
            stack.append((pc, slots))
            while let (pc, slots) = stack.popLast() {
                guard seen.insert(pc) else { continue }
                steps += 1
                switch code[pc] {
                case .jump(let target): stack.append((target, slots))
                case .split(let first, let second):
                    stack.append((second, slots))
                    stack.append((first, slots))
                case .save(let slot):
                    var saved = slots
                    if slot < saved.count { saved[slot] = position }
                    stack.append((pc + 1, saved))
                case .lineStart, .lineEnd, .wordBoundary, .lookAhead:
                    if try holds(code[pc], at: position) { stack.append((pc + 1, slots)) }
                case .scalar, .any, .set, .match:
                    list.append((pc, slots))
                }
            }
            guard steps <= RowPattern.maxSteps else { throw RowPattern.StepLimit() }
        }
        let empty = Array(repeating: -1, count: slots)
        try add(0, empty, at: 0, to: &current)
        var position = 0
        while true {
            seen.clear()
            next.removeAll(keepingCapacity: true)
            let scalar = position < text.count ? Folding.fold(text[position]) : nil
            let original = position < text.count ? text[position] : nil
            threads: for thread in current {
                steps += 1
                switch code[thread.pc] {
                case .match:
                    matched = thread.slots
                    break threads
                case .scalar(let wanted):
                    if let scalar, wanted == scalar { try add(thread.pc + 1, thread.slots, at: position + 1, to: &next) }
                case .any:
                    if let original, original != "\n", original != "\r" { try add(thread.pc + 1, thread.slots, at: position + 1, to: &next) }
                case .set(let index):
                    if let original, program.sets[index].contains(original) { try add(thread.pc + 1, thread.slots, at: position + 1, to: &next) }
                default:
                    break
                }
            }
            guard position < text.count else { break }
            position += 1
            // A match starting here ranks below every thread already under way.
            if matched == nil { try add(0, empty, at: position, to: &next) }
            // Once a match is found and nothing ranked above it is alive, it stands; before
            // that, a start whose assertion failed here leaves no thread, and the search goes on.
            if next.isEmpty, matched != nil { break }
            swap(&current, &next)
        }
        return matched
    }
}

/// Instructions alive at a position, each once, in the order added, cleared in constant time.
struct SparseSet {
    private var dense: [Int]
    private var sparse: [Int]
    private(set) var count = 0

    init(capacity: Int) {
        dense = Array(repeating: 0, count: capacity)
        sparse = Array(repeating: 0, count: capacity)
    }

    var members: ArraySlice<Int> { dense[..<count] }

    subscript(_ index: Int) -> Int { dense[index] }

    mutating func insert(_ value: Int) -> Bool {
        let slot = sparse[value]
        if slot < count, dense[slot] == value { return false }
        sparse[value] = count
        dense[count] = value
        count += 1
        return true
    }

    mutating func clear() { count = 0 }
}
