#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Whether human output is coloured. Colour is for terminals only: never into a pipe or a
/// file, never with `NO_COLOR` set (https://no-color.org) or `TERM=dumb`, and never with
/// `--json` (which prints the RPC result as it is).
public struct Style: Sendable, Equatable {
    public var color: Bool

    public init(color: Bool) { self.color = color }

    public static let plain = Style(color: false)
    public static let ansi = Style(color: true)

    /// The style for output written to `descriptor` in `environment`.
    public static func detect(descriptor: Int32, environment: [String: String] = ProcessInfo.processInfo.environment) -> Style {
        if let noColor = environment["NO_COLOR"], !noColor.isEmpty { return .plain }
        if environment["TERM"] == "dumb" { return .plain }
        return Style(color: isatty(descriptor) == 1)
    }

    /// Standard output's and standard error's styles, decided once per process.
    public static let standardOutput = detect(descriptor: STDOUT_FILENO)
    public static let standardError = detect(descriptor: STDERR_FILENO)

    private func paint(_ text: String, _ code: String) -> String {
        color && !text.isEmpty ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    public func bold(_ text: String) -> String { paint(text, "1") }
    public func dim(_ text: String) -> String { paint(text, "2") }
    public func green(_ text: String) -> String { paint(text, "32") }
    public func yellow(_ text: String) -> String { paint(text, "33") }
    public func red(_ text: String) -> String { paint(text, "31") }
    public func cyan(_ text: String) -> String { paint(text, "36") }
}

extension String {
    /// Columns the text takes on a terminal: characters, not counting ANSI colour sequences.
    public var visibleWidth: Int {
        var width = 0
        var inEscape = false
        for scalar in unicodeScalars {
            if inEscape {
                if scalar == "m" { inEscape = false }
            } else if scalar == "\u{1B}" {
                inEscape = true
            } else {
                width += 1
            }
        }
        return width
    }

    /// Spaces before the text up to `width` visible columns.
    public func leftPadded(to width: Int) -> String { String(repeating: " ", count: max(0, width - visibleWidth)) + self }

    /// Spaces after the text up to `width` visible columns.
    public func rightPadded(to width: Int) -> String { self + String(repeating: " ", count: max(0, width - visibleWidth)) }
}
