import SavingsCore

/// `rules`: a rules file as `tx.import` reads one (`rules` naming a file, or `rules_text`): UTF-8
/// text, at most 64 KiB, through `ImportRules(toml:name:)`.
enum RulesTarget {
    static let target = FuzzTarget("rules", run: run)

    static func run(_ input: UnsafeRawBufferPointer) {
        // A rules file that is not UTF-8 is refused before it is parsed.
        guard let text = String(validating: input, as: UTF8.self) else { return }
        do {
            _ = try ImportRules(toml: text, name: "fuzz.toml")
            trace("rules: read")
        } catch {
            trace("rules: \(error)")
        }
    }
}
