import Testing
@testable import SavingsRPC

@Suite struct JSONCodecTests {
    @Test func numbersKeepTheirLiteralText() throws {
        let value = try JSONParser.parse(#"{"a":0.1,"b":-12.50,"c":1e3,"d":12345678901234567890.123456789}"#)
        #expect(value["a"] == .number("0.1"))
        #expect(value["b"] == .number("-12.50"))
        #expect(value["c"] == .number("1e3"))
        #expect(value["d"] == .number("12345678901234567890.123456789"))
    }

    /// Parsing with `keeping`: at every depth only the named members are kept; the others are
    /// stepped over whatever they hold (brackets and quotes inside strings included), and the
    /// text around them is still checked; a member never reads past the range given.
    @Test func keepingOnlyTheNamedMembers() throws {
        let text = Array(#"{"txid":"ab","hex":"{[\\\"]","vin":[{"value":"5","txid":"cd","n":0}],"blockHash":[{"x":[1,2]},"}"],"n":-1.5e3}"#.utf8)
        let kept = try JSONParser.parse(text, in: 0..<text.count, keeping: ["txid", "vin", "value"])
        #expect(kept == ["txid": "ab", "vin": [["value": "5", "txid": "cd"]]])
        for broken in [#"{"txid":"ab","hex":}"#, #"{"txid":"ab","hex":"x""#, #"{"txid":"ab","hex":"x" "n":1}"#, #"{"hex":[1,2}"#] {
            let bytes = Array(broken.utf8)
            #expect(throws: JSONParser.Failure.self, "\(broken)") { try JSONParser.parse(bytes, in: 0..<bytes.count, keeping: ["txid"]) }
        }
        // Two elements side by side: the first, given alone, cannot run on into the second.
        let pair = Array(#"{"a":1,"hex":[1,{"b":2}]},{"a":2}"#.utf8)
        #expect(try JSONParser.parse(pair, in: 0..<25, keeping: ["a"]) == ["a": 1])
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(pair, in: 0..<20, keeping: ["a"]) }
    }

    /// Reading an array's objects by named members: each member found where it lies (a key
    /// with escapes decoded, a key given twice: its first), the others stepped over whatever
    /// they hold, absent ones nil; an element that is no object, or a broken list, refuses all.
    @Test func readingObjectsByNamedMembers() throws {
        let names = JSONParser.Names(["txid", "value", "n"])
        let text = Array(#"[{"txid":"ab","hex":"{[\\\"]\"txid\":","v\u0061lue":{"x":[1,"}"]},"txid":"no"}, {} ,{"n":-1.5e3,"value":"5"}]"#.utf8)
        var found: [[JSONValue?]] = []
        var elements: [String] = []
        let read = JSONParser.forEachObject(of: text, in: 0..<text.count, named: names) { element, values in
            elements.append(String(decoding: text[element], as: UTF8.self))
            found.append(values.map { $0.map { try! JSONParser.parse(text, in: $0) } })
        }
        #expect(read)
        #expect(found == [["ab", ["x": [1, "}"]], nil], [nil, nil, nil], [nil, "5", .number("-1.5e3")]])
        #expect(elements[1] == "{}")
        for broken in [#"[{"txid":"ab"},1]"#, #"[{"txid":}]"#, #"[{"txid":"ab" "n":1}]"#, #"[{"txid":"ab"}"#, #"{"txid":"ab"}"#, #"[{"txid:1}]"#] {
            let bytes = Array(broken.utf8)
            #expect(!JSONParser.forEachObject(of: bytes, in: 0..<bytes.count, named: names) { _, _ in }, "\(broken)")
        }
        // Within its range only: the list given alone cannot run on into what follows.
        let pair = Array(#"[{"n":1}],[{"n":2}]"#.utf8)
        #expect(JSONParser.forEachObject(of: pair, in: 0..<9, named: names) { _, _ in })
        #expect(!JSONParser.forEachObject(of: pair, in: 0..<7, named: names) { _, _ in })
    }

    /// One member's list read in the same pass as the object's members: the members as
    /// `members(of:)` finds them, the list's objects as reading it after does; the first of two
    /// members of that name is the one read; a list that is not one of objects refuses the text.
    @Test func readingAListInThePassOverItsObject() throws {
        let names = JSONParser.Names(["txid"])
        let text = Array(#"{"page":1,"transactions":[{"txid":"a"},{"txid":"b","x":[]}],"txs":2,"transactions":[{"txid":"c"}]}"#.utf8)
        var read: [String] = []
        let members = JSONParser.members(of: text, reading: "transactions") { start in
            JSONParser.forEachObject(of: text, from: start, before: text.count, named: names) { _, values in
                read.append(try! JSONParser.parse(text, in: values[0]!).stringValue!)
            }
        }
        #expect(read == ["a", "b"])
        #expect(members.map { $0.map(\.key) } == ["page", "transactions", "txs", "transactions"])
        #expect(members.map { $0.map(\.value) } == JSONParser.members(of: text).map { $0.map(\.value) })
        for broken in [#"{"transactions":[1],"txs":2}"#, #"{"transactions":{"txid":"a"}}"#, #"{"transactions":[{"txid":"a"}}"#,
                       #"{"transactions":[{"txid":"a"}],"txs"}"#] {
            let bytes = Array(broken.utf8)
            let refused = JSONParser.members(of: bytes, reading: "transactions") { start in
                JSONParser.forEachObject(of: bytes, from: start, before: bytes.count, named: names) { _, _ in }
            }
            #expect(refused == nil, "\(broken)")
        }
    }

    @Test func stringsDecodeEscapesAndSurrogates() throws {
        let value = try JSONParser.parse(#"["a\"b\\c\/\n\t", "\u00e9\ud83d\ude00", "plain é"]"#)
        #expect(value == .array([.string("a\"b\\c/\n\t"), .string("é😀"), .string("plain é")]))
    }

    @Test(arguments: [
        "", "{", "[1,]", "{\"a\":1,}", "01", "1.", "-", "tru", "nul", "\"abc", "{\"a\" 1}", "[1 2]", "{'a':1}",
        "\"\\x\"", "\"\\ud800\"", "\"tab\there\"", "1 2", "{\"a\":1}{", "NaN", "[+1]",
    ])
    func rejectsInvalidJSON(text: String) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(text) }
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x22, 0xFF, 0xFE, 0x22]) }
    }

    @Test func rejectsDuplicateKeys() throws {
        #expect(throws: JSONParser.Failure(message: #"duplicate key "a""#, offset: 10)) { try JSONParser.parse(#"{"a":1,"a":2}"#) }
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(#"{"x":{"b":[1],"c":2,"b":{"d":3}}}"#) }
        // Many distinct keys are fine.
        let many = "{" + (0..<20).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}"
        #expect(try JSONParser.parse(many)["k19"] == 19)
    }

    @Test func boundsNestingDepth() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(deep) }
        let fine = String(repeating: "[", count: 60) + String(repeating: "]", count: 60)
        _ = try JSONParser.parse(fine)
    }

    /// Strings without anything to escape are copied whole; the others go byte by byte. Both
    /// must give text that reads back as the same string, with the escapes JSON needs.
    @Test func everyStringRoundTripsThroughBothPaths() throws {
        #expect(JSONSerializer.serialize(.string("a\u{2028}b\u{2029}é")) == #""a\u2028b\u2029é""#)
        #expect(JSONSerializer.serialize(.string("–—…")) == #""–—…""#, "other characters after the byte 0xE2 stay as they are")
        #expect(JSONSerializer.serialize(.string(String(repeating: "x", count: 40) + "\u{7}")) == #""\#(String(repeating: "x", count: 40))\u0007""#)
        let alphabet: [Character] = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\r", "\t", "\u{0}", "\u{1F}", "\u{7F}", "é", "€", "\u{2028}", "\u{2029}", "–", "😀"]
        var random = SystemRandomNumberGenerator()
        for _ in 0..<5_000 {
            let text = String((0..<Int(random.next() % 12)).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] })
            let serialized = JSONSerializer.serialize(["k": .string(text)])
            #expect(try JSONParser.parse(serialized) == ["k": .string(text)], "\(serialized)")
            #expect(!serialized.contains("\u{2028}") && !serialized.unicodeScalars.contains { $0.value < 0x20 })
        }
    }

    @Test func serializerRoundTripsAndSortsKeys() throws {
        let value: JSONValue = ["z": 1, "a": ["x\n\u{1}\"", .null, true, .number("0.10")], "m": [:]]
        let text = JSONSerializer.serialize(value)
        #expect(text == #"{"a":["x\n\u0001\"",null,true,0.10],"m":{},"z":1}"#)
        #expect(try JSONParser.parse(text) == value)
        #expect(try JSONParser.parse(JSONSerializer.pretty(value)) == value)
    }

    /// The size an answer's buffer is made with is its written size when nothing needs an
    /// escape, and only short of it by the escapes otherwise.
    @Test func theEstimatedSizeIsTheWrittenOne() throws {
        let goal: JSONValue = ["name": "Trip 2027", "funded": .number("12.50"), "tags": ["a", .null, false, true], "none": [:], "empty": []]
        let values: [JSONValue] = [goal, [goal, .serialized(SerializedJSON(goal)), 7], .null, [], [:], "x", ["k": ["n": [1]]]]
        for value in values {
            #expect(JSONSerializer.estimatedCount(value) == JSONSerializer.bytes(value).count, "\(JSONSerializer.serialize(value))")
        }
        let escaped: JSONValue = ["a": "line\nbreak \"quoted\""]
        #expect(JSONSerializer.estimatedCount(escaped) == JSONSerializer.bytes(escaped).count - 3)
    }

    /// A value kept with its serialization is the value it holds for every reading, and is
    /// written as that value would be, wherever it sits.
    @Test func serializedValuesReadAndWriteAsTheirValue() throws {
        let goal: JSONValue = ["name": "Trip \"2027\"\n", "funded": .number("12.50"), "tags": ["a", .null, false], "none": [:]]
        let kept = JSONValue.serialized(SerializedJSON(goal))
        let twice = JSONValue.serialized(SerializedJSON(kept))
        for (plain, wrapped) in [(goal, kept), (goal, twice), (["goals": [goal, goal], "n": 2], ["goals": [kept, twice], "n": 2]),
                                 ([goal], [kept]), ("x", .serialized(SerializedJSON("x"))), (.null, .serialized(SerializedJSON(.null)))] {
            #expect(JSONSerializer.bytes(wrapped) == JSONSerializer.bytes(plain))
            #expect(JSONSerializer.pretty(wrapped) == JSONSerializer.pretty(plain))
            #expect(wrapped == plain && plain == wrapped)
            #expect(wrapped.typeName == plain.typeName)
            #expect(try JSONParser.parse(JSONSerializer.serialize(wrapped)) == plain)
        }
        #expect(kept["name"] == "Trip \"2027\"\n")
        #expect(kept["funded"] == .number("12.50"))
        #expect(kept.objectValue?.count == 4)
        #expect(kept["tags"]?.arrayValue?.count == 3)
        #expect(JSONValue.serialized(SerializedJSON(true)).boolValue == true)
        #expect(JSONValue.serialized(SerializedJSON(7)).intValue == 7)
        #expect(kept != .serialized(SerializedJSON(["name": "Trip"])))
        #expect(kept != [goal])
    }

    /// An object's members found without reading their values: each range parses to the value
    /// a whole parse gives, strings with quotes, backslashes and brackets inside included.
    @Test func membersAreFoundWithoutReadingTheValues() throws {
        let text = #"{"id":1, "s":"a \"quoted\" ]} \\", "o":{"x":[1,{"y":"}"}],"z":"\\\""}, "n":-1.5e3,"t":true ,"e":[],"u":"é ☕️","last":12}"#
        let bytes = Array(text.utf8)
        let members = try #require(JSONParser.members(of: bytes))
        #expect(members.map(\.key) == ["id", "s", "o", "n", "t", "e", "u", "last"])
        let whole = try JSONParser.parse(bytes)
        for member in members {
            #expect(try JSONParser.parse(bytes, in: member.value) == whole[member.key], "\(member.key)")
        }
        let inner = try #require(members.first { $0.key == "o" }?.value)
        #expect(JSONParser.members(of: bytes, in: inner)?.map(\.key) == ["x", "z"])
        #expect(JSONParser.members(of: Array("{}".utf8))?.isEmpty == true)
        for broken in ["[1]", "{\"a\":\"open}", "{\"a\":[1}", "{\"a\" 1}", "{\"a\":1", "", "{\"a\":1]", "{\"a\":}"] {
            #expect(JSONParser.members(of: Array(broken.utf8)) == nil, "\(broken)")
        }
        // A range must hold exactly one value.
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(bytes, in: 0..<5) }
    }

    /// The string fast path: ASCII, other UTF-8, and bytes that are not UTF-8.
    @Test func stringsAreReadAsUTF8() throws {
        #expect(try JSONParser.parse(#"["plain","café ☕️","a\u00e9b"]"#) == ["plain", "café ☕️", "a\u{e9}b"])
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x22, 0xC3, 0x28, 0x22]) }
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x22, 0x61, 0x0A, 0x22]) }
    }
}
