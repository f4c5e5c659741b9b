// savings-fuzz TARGET [libFuzzer flags] [inputs]: the fuzz targets over what savingsd and
// savings-web read from outside, one per surface (see Targets.swift).
//
// Built by `make fuzz` (Fuzz/build.sh: -DFUZZING, libFuzzer's coverage and AddressSanitizer)
// it hands TARGET's entry to libFuzzer's driver; built plainly (swift build, make test) it
// replays the files given, or the files of the directories given, through the same entry, so the
// committed corpus stays a regression check.
import Foundation

let arguments = CommandLine.arguments
let usage = """
    usage: savings-fuzz TARGET [libFuzzer flags] [FILE|DIR]...
           savings-fuzz all DIR...     (replays DIR/TARGET of every target)
    targets: \(FuzzTargets.all.map(\.name).joined(separator: ", "))

    """

// The target: the first argument, or (in the processes libFuzzer starts for -merge and -fork,
// which get the flags but not the target) the one the parent chose.
var rest = Array(arguments.dropFirst())
let chosen: String
if let first = rest.first, first == "all" || FuzzTargets.named(first) != nil {
    chosen = first
    rest.removeFirst()
} else if let inherited = ProcessInfo.processInfo.environment[FuzzTargets.environmentKey] {
    chosen = inherited
} else {
    FileHandle.standardError.write(Data(usage.utf8))
    exit(2)
}

#if FUZZING
guard let target = FuzzTargets.named(chosen) else {
    FileHandle.standardError.write(Data("savings-fuzz: libFuzzer runs one target at a time\n\(usage)".utf8))
    exit(2)
}
setenv(FuzzTargets.environmentKey, chosen, 1)
FuzzTargets.selected = target
FuzzTargets.prepare(target)
// libFuzzer's own argument vector: the program, then everything after the target.
var driverArguments: [UnsafeMutablePointer<CChar>?] = [CommandLine.unsafeArgv[0]]
for index in 1..<Int(CommandLine.argc) where !(index == 1 && arguments[1] == chosen) {
    driverArguments.append(CommandLine.unsafeArgv[index])
}
driverArguments.append(nil)
var driverCount = CInt(driverArguments.count - 1)
let status = driverArguments.withUnsafeMutableBufferPointer { buffer in
    var vector = buffer.baseAddress!
    return LLVMFuzzerRunDriver(&driverCount, &vector) { data, size in
        FuzzTargets.selected!.run(UnsafeRawBufferPointer(start: data, count: size))
        return 0
    }
}
exit(status)
#else
// Replay: every file given, or every file in each directory given.
let targets = chosen == "all" ? FuzzTargets.all : [FuzzTargets.named(chosen)!]
var failed = false
for target in targets {
    let paths = chosen == "all" ? rest.map { ($0 as NSString).appendingPathComponent(target.name) } : rest
    var inputs: [String] = []
    for path in paths {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            FileHandle.standardError.write(Data("savings-fuzz: no such file or directory: \(path)\n".utf8))
            failed = true
            continue
        }
        if isDirectory.boolValue {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            inputs += names.sorted().map { (path as NSString).appendingPathComponent($0) }
        } else {
            inputs.append(path)
        }
    }
    FuzzTargets.prepare(target)
    let start = ContinuousClock.now
    for input in inputs {
        guard let data = FileManager.default.contents(atPath: input) else { continue }
        data.withUnsafeBytes { target.run($0) }
    }
    let elapsed = ContinuousClock.now - start
    let line = "savings-fuzz \(target.name): \(inputs.count) inputs replayed in \(elapsed.formatted(.units(allowed: [.seconds, .milliseconds], width: .narrow)))\n"
    FileHandle.standardOutput.write(Data(line.utf8))
}
exit(failed ? 1 : 0)
#endif
