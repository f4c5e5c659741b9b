import SavingsCore

/// `pattern`: a rules pattern and a field, as `[[when]] matches`, `skip` and a second leg's
/// `matches` meet them: the input's first line is the pattern, the rest the field. Both runs
/// of the automaton must agree: the groups are found exactly when the pattern matches, each
/// group's text is a piece of the field, and neither takes more steps than its budget allows.
enum PatternTarget {
    static let target = FuzzTarget("pattern", run: run)

    static func run(_ input: UnsafeRawBufferPointer) {
        let newline = input.firstIndex(of: 0x0A) ?? input.endIndex
        guard let source = String(validating: UnsafeRawBufferPointer(rebasing: input[..<newline]), as: UTF8.self),
              let field = String(validating: UnsafeRawBufferPointer(rebasing: input[min(newline + 1, input.endIndex)...]), as: UTF8.self),
              let pattern = try? RowPattern(source, key: "matches") else { return }
        let matched: Bool
        let groups: [String: String]?
        do {
            matched = try pattern.matches(field)
            groups = try pattern.captures(field).groups
        } catch {
            trace("pattern: over the step budget")
            return
        }
        guard matched == (groups != nil) else {
            finding("'\(source)' on \(field.debugDescription): matches says \(matched), the groups run says \(groups != nil)")
        }
        let scalars = Array(field.unicodeScalars)
        /// Whether `text`'s scalars stand in the field one after another (a group may split a
        /// grapheme, so Characters are not compared).
        func inField(_ text: String) -> Bool {
            let wanted = Array(text.unicodeScalars)
            guard wanted.count <= scalars.count else { return false }
            return (0...(scalars.count - wanted.count)).contains { start in scalars[start..<start + wanted.count].elementsEqual(wanted) }
        }
        for (name, text) in groups ?? [:] where !text.isEmpty && !inField(text) {
            finding("'\(source)': group \(name) holds \(text.debugDescription), which the field does not contain")
        }
        for (name, number) in pattern.groupNames where groups?[name] != groups?[String(number)] {
            finding("'\(source)': group \(name) is not group \(number)")
        }
        trace("pattern: \(matched), \(groups?.count ?? 0) groups")
    }
}
