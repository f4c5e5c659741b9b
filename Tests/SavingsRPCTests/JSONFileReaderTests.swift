import Foundation
import Testing
@testable import SavingsRPC

/// The document reader of `data.import`: members and elements one at a time, across chunks.
@Suite struct JSONFileReaderTests {
    func file(_ text: String) throws -> FileHandle {
        try file(Array(text.utf8))
    }

    func file(_ bytes: [UInt8]) throws -> FileHandle {
        let path = NSTemporaryDirectory() + "reader-\(UUID().uuidString)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        return try #require(FileHandle(forReadingAtPath: path))
    }

    /// Every member, with each array's elements parsed one by one and anything else whole.
    func read(_ handle: FileHandle, maxBytes: Int = 1 << 20) throws -> [String: JSONValue] {
        let reader = try JSONFileReader(handle)
        var members: [String: JSONValue] = [:]
        try reader.members { key in
            if try reader.peek() == UInt8(ascii: "[") {
                var items: [JSONValue] = []
                try reader.elements(maxBytes: maxBytes) { index, bytes, offset in
                    #expect(index == items.count)
                    items.append(try JSONFileReader.parse(bytes, at: offset))
                }
                members[key] = .array(items)
            } else {
                let (bytes, offset) = try reader.value(maxBytes: maxBytes)
                members[key] = try JSONFileReader.parse(bytes, at: offset)
            }
        }
        try reader.expectEnd()
        return members
    }

    @Test func readsWhatTheWholeParserReadsWhereverTheChunksEnd() throws {
        // Rows whose strings hold quotes, backslashes and brackets, over several chunks: every
        // place a chunk can end in (inside a string, after a backslash, between rows) comes up.
        var rows: [String] = []
        for index in 0..<40_000 {
            let note = String(repeating: "\\\\", count: index % 3) + "a \\\"quoted\\\" ] } [ { , note \(index)" + String(repeating: "x", count: index % 17)
            rows.append(#"{"id":\#(index),"note":"\#(note)","nested":[1,{"a":[]}],"t":true,"n":null,"d":-1.5e3}"#)
        }
        let text = #"{ "format" : "savingsd-export", "version":1, "rows" : [ "# + rows.joined(separator: " ,\n") + " ], \"empty\":[] , \"last\": 12 }\n"
        #expect(text.utf8.count > 3 * JSONFileReader.chunkBytes)
        let whole = try JSONParser.parse(text)
        let streamed = try read(try file(text))
        #expect(JSONValue.object(streamed) == whole)
    }

    @Test func aSectionCanBeReadAgainFromWhereItStarts() throws {
        let text = #"{"a":[1,2],"b":[{"x":"]"},{"y":3}]}"#
        let offset = try #require(text.range(of: #"[{"x""#)).lowerBound.utf16Offset(in: text)
        let reader = try JSONFileReader(try file(text), offset: offset)
        var seen: [JSONValue] = []
        try reader.elements(maxBytes: 100) { _, bytes, at in seen.append(try JSONFileReader.parse(bytes, at: at)) }
        #expect(seen == [["x": "]"], ["y": 3]])
    }

    @Test func aValueLongerThanTheBoundIsRefusedWithoutBeingHeld() throws {
        let long = String(repeating: "a", count: 3 * JSONFileReader.chunkBytes)
        let reader = try JSONFileReader(try file(#"{"rows":["short","\#(long)"]}"#))
        #expect(throws: JSONFileReader.ValueTooLong.self) {
            try reader.members { _ in try reader.elements(maxBytes: 1_000) { _, _, _ in } }
        }
        // Skipped, a value of any length is passed over.
        let skipping = try JSONFileReader(try file(#"{"rows":["\#(long)"],"after":1}"#))
        var keys: [String] = []
        try skipping.members { key in
            keys.append(key)
            try skipping.skip()
        }
        #expect(keys == ["rows", "after"])
    }

    @Test(arguments: [
        (#"{"a":[1,2}"#, 9), (#"{"a":[1 2]}"#, 8), (#"{"a" 1}"#, 5), (#"{"a":[1,2]"#, 10), (#"{"a":[1]} x"#, 10),
        (#"["a"]"#, 0), (#"{"a":["x]}"#, 10), ("", 0), (#"{"a":[{"b":1,}]}"#, 13),
    ])
    func malformedDocumentsAreRefusedWhereTheyGoWrong(text: String, offset: Int) throws {
        do {
            _ = try read(try file(text))
            Issue.record("read \(text)")
        } catch let failure as JSONParser.Failure {
            #expect(failure.offset == offset, "\(text): \(failure)")
        }
    }
}
