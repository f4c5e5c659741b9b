import Foundation
import SavingsRPC
import Testing

/// `savingsctl report --html` rendered by headless Chromium, as a person would open it.
@Suite struct ReportTests {
    static let chromium = ["/usr/bin/chromium-headless-shell", "/usr/bin/chromium"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs")

    static func browse(_ arguments: [String], in directory: String) throws -> (status: Int32, stdout: String, stderr: String) {
        let browser = try #require(chromium, "headless Chromium is needed (make test installs chromium-headless-shell)")
        return try runCtl(["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
                           "--user-data-dir=\(directory)/chromium"] + arguments,
                          environment: ["HOME": directory], executable: browser)
    }

    @Test func theReportRendersWithEveryPart() throws {
        let daemon = try DaemonProcess()
        let socket = ["--socket", daemon.socketPath]
        _ = try ok(socket, ["demo"])
        let page = daemon.directory + "/report.html"
        #expect(try ok(socket, ["report", "--html", page]).contains("report written to"))
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(!html.lowercased().contains("<script"))
        // Nothing to fetch: the only URL is SVG's namespace name.
        #expect(!html.replacingOccurrences(of: "http://www.w3.org/2000/svg", with: "").contains("://"))

        // The DOM Chromium builds from it has every chart and one bar per goal, month and asset.
        let dom = try Self.browse(["--dump-dom", "file://" + page], in: daemon.directory)
        #expect(dom.status == 0, "\(dom.stderr)")
        for id in ["goal-progress", "monthly-chart", "allocations", "rates"] {
            #expect(dom.stdout.contains("id=\"\(id)\""), "no #\(id)")
        }
        #expect(dom.stdout.components(separatedBy: "class=\"goal\"").count - 1 == 4)
        #expect(dom.stdout.components(separatedBy: "class=\"month\"").count - 1 == 12)
        #expect(dom.stdout.components(separatedBy: "class=\"asset\"").count - 1 == 4)
        #expect(dom.stdout.components(separatedBy: "class=\"contributed\"").count - 1 == 6)
        for name in ["Emergency fund", "Japan trip", "New laptop", "House deposit", "BTC/EUR"] {
            #expect(dom.stdout.contains(name))
        }

        // The picture: a PNG of the requested size with real content (a blank page compresses to a few kB).
        let png = daemon.directory + "/report.png"
        let shot = try Self.browse(["--window-size=960,1300", "--screenshot=" + png, "file://" + page], in: daemon.directory)
        #expect(shot.status == 0, "\(shot.stderr)")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: png)))
        #expect(bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
        func bigEndian(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        #expect(bigEndian(16) == 960 && bigEndian(20) == 1300)
        #expect(bytes.count > 40_000, "\(bytes.count) bytes: the page looks empty")
        if ProcessInfo.processInfo.environment["SAVINGSD_UPDATE_DOCS"] == "1" {
            try Data(bytes).write(to: Self.docs.appendingPathComponent("report-example.png"))
        }
    }
}
