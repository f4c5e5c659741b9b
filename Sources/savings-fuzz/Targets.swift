import Foundation

/// One surface: its name on the command line and what it does with one input. An entry must
/// never crash on any input; a broken invariant it checks is a `fatalError` (a finding).
struct FuzzTarget: Sendable {
    let name: String
    /// Made once before the first input (fixed rules, the web responder, ...).
    let prepare: @Sendable () -> Void
    let run: @Sendable (UnsafeRawBufferPointer) -> Void

    init(_ name: String, prepare: @escaping @Sendable () -> Void = {}, run: @escaping @Sendable (UnsafeRawBufferPointer) -> Void) {
        self.name = name
        self.prepare = prepare
        self.run = run
    }
}

enum FuzzTargets {
    static let all: [FuzzTarget] = [
        RequestsTarget.target, RulesTarget.target, PatternTarget.target, CSVTarget.target, ExportTarget.target,
        ExplorerTargets.blockbook, ExplorerTargets.esplora, WebTarget.target, MultipartTarget.target, KrakenTarget.target,
        BinanceTarget.target, CoinbaseTarget.target, SimpleFINTarget.target,
    ]

    static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }

    /// Carries the target to the processes libFuzzer starts itself (-merge=1, -fork).
    static let environmentKey = "SAVINGS_FUZZ_TARGET"

    /// The target libFuzzer's callback runs (set once, before the driver starts).
    nonisolated(unsafe) static var selected: FuzzTarget?

    static func prepare(_ target: FuzzTarget) { target.prepare() }
}

#if FUZZING
/// libFuzzer's entry when it does not supply `main` (libclang_rt.fuzzer_no_main): parses its
/// flags out of argv and runs `callback` on every input.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt
#endif

/// Runs `body` to its end and waits for it here: libFuzzer's callback is synchronous.
func blocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let box = Box<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        box.value = await body()
        done.signal()
    }
    done.wait()
    return box.value!
}

/// A value handed from the task to the waiting thread (the semaphore orders the two).
private final class Box<T>: @unchecked Sendable {
    var value: T?
}

/// A broken invariant: the input is written out by libFuzzer as a crash.
func finding(_ message: String) -> Never {
    fatalError("savings-fuzz finding: \(message)")
}

/// With SAVINGS_FUZZ_TRACE=1, what each input came to (on standard error): to check what
/// seeds reach (`savings-fuzz csv Fuzz/corpus/csv/plain`).
let tracing = ProcessInfo.processInfo.environment["SAVINGS_FUZZ_TRACE"] == "1"

func trace(_ message: @autoclosure () -> String) {
    if tracing { FileHandle.standardError.write(Data((message() + "\n").utf8)) }
}
