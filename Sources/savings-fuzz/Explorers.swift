import Foundation
import SavingsCore
import SavingsDaemon

/// `blockbook`, `esplora`: a block explorer's answers to one sync (`ChainAnswers.read`: the
/// listing, then the walk of the details), given from memory through `ProviderHTTP`'s answer
/// function. The input's first line names the watch (`Watches`; any other line picks one by its
/// bytes); the rest is the answers, separated by lines of `---`, each answering one kind of
/// request (see `Explorer.slot`); a request whose answer is missing fails as an outage does.
/// What a sync accepts must hold together: txids of 64 hex digits, listed once, the mempool's
/// among them, pages numbered within their count.
enum ExplorerTargets {
    static let blockbook = Explorer(provider: "blockbook").target
    static let esplora = Explorer(provider: "esplora").target
}

struct Explorer {
    let provider: String
    /// Pages of confirmed history asked for so far (Esplora).
    private let chainPages = Counter()
    static let base = "https://explorer.invalid"
    /// A small `[onchain] max_transactions`, which bounds the pages a walk may take.
    static let maxTransactions = 1_000
    /// Requests answered in one input: an Esplora key scan asks for each address's stats.
    static let maxRequests = 64

    var target: FuzzTarget {
        let provider = provider
        return FuzzTarget(provider, prepare: { _ = Watches.all }, run: { Explorer(provider: provider).run($0) })
    }

    /// The watches for this provider (Esplora serves Bitcoin-family chains): Esplora scans a key's addresses itself, deriving 40 or more
    /// (about 25 ms each unoptimized), which would leave few inputs a second for the answers'
    /// parsing; the scan's answers are the address answers the other watches read.
    var watches: [(name: String, target: WatchTarget)] {
        provider == "esplora" ? Watches.all.filter { $0.target.xpub == nil && $0.target.chain.isUTXO } : Watches.all
    }

    /// Which answer of the input a URL gets.
    func slot(_ url: String) -> Int {
        let path = url.dropFirst(Self.base.count)
        if provider == "blockbook" {
            if path.hasPrefix("/api/v2/") {
                let first = path.contains("&page=1&")
                return path.contains("details=txids") ? (first ? 1 : 2) : (first ? 3 : 4)
            }
            return 0  // /api/: the status
        }
        if path.hasSuffix("/blocks/tip/height") { return 0 }
        // Each further page of an address's confirmed history the next answer.
        if path.contains("/txs/chain/") { return 3 + chainPages.next() - 1 }
        if path.hasSuffix("/txs") { return 2 }
        return 1  // /address/ADDRESS: its stats
    }

    func run(_ input: UnsafeRawBufferPointer) {
        let newline = input.firstIndex(of: 0x0A) ?? input.endIndex
        let selector = input[..<newline]
        let name = String(decoding: selector, as: UTF8.self)
        let watches = self.watches
        let watch = watches.first { $0.name == name } ?? watches[selector.reduce(0) { $0 + Int($1) } % watches.count]
        let answers = Self.split(Array(input[min(newline + 1, input.endIndex)...]))
        let requests = Counter()
        let explorer = self
        let outcome = blocking { () -> Result<ChainAnswers.Read, any Error> in
            do {
                return .success(try await ChainAnswers.read(provider: explorer.provider, base: Self.base, target: watch.target,
                                                            maxTransactions: Self.maxTransactions) { url in
                    guard requests.next() <= Self.maxRequests else { throw Outage() }
                    let slot = explorer.slot(url)
                    // History after the answers given is empty; any other answer missing is an outage.
                    guard slot < answers.count else {
                        if explorer.provider == "esplora", slot > 3 { return Array("[]".utf8) }
                        throw Outage()
                    }
                    return answers[slot]
                })
            } catch {
                return .failure(error)
            }
        }
        switch outcome {
        case .success(let read):
            trace("\(provider) \(watch.name): \(read.txids.count) listed, \(read.unconfirmed.count) unconfirmed, balance \(read.balance), "
                + "height \(read.height.map(String.init) ?? "none"), pages \(read.pages.map { "\($0.page)/\($0.pages): \($0.transactions.count)" }), "
                + "\(requests.next() - 1) requests")
            check(read, chain: watch.target.chain)
        case .failure(let error):
            trace("\(provider) \(watch.name): failed after \(requests.next() - 1) requests: \(error)")
        }
    }

    func check(_ read: ChainAnswers.Read, chain: Chain) {
        guard Set(read.txids).count == read.txids.count else { finding("a txid listed twice") }
        guard read.unconfirmed.isSubset(of: read.txids) else { finding("a mempool transaction not listed") }
        for txid in read.txids where !Self.isTxid(txid, chain: chain) { finding("a listed txid is not one: \(txid.debugDescription)") }
        for page in read.pages {
            // (A page number past the count is believed as the provider gives it: Blockbook's
            // "page" is checked against the most pages, not against its "totalPages".)
            guard page.page >= 1, page.pages >= 1 else { finding("page \(page.page) of \(page.pages)") }
            for transaction in page.transactions {
                guard Self.isTxid(transaction.txid, chain: chain) else { finding("a walked txid is not one: \(transaction.txid.debugDescription)") }
                guard transaction.confirmations >= 0 else { finding("\(transaction.confirmations) confirmations") }
            }
        }
    }

    /// 64 hex digits, `0x` first on Ethereum: what is stored, shown and put into later URLs.
    static func isTxid(_ text: String, chain: Chain) -> Bool {
        let digits = chain == .ethereum ? (text.hasPrefix("0x") ? text.utf8.dropFirst(2) : "".utf8[...]) : text.utf8[...]
        return digits.count == 64 && digits.allSatisfy { $0 < 0x80 && Character(Unicode.Scalar($0)).isHexDigit }
    }

    /// The answers: the input split at lines of `---`.
    static func split(_ bytes: [UInt8]) -> [[UInt8]] {
        let separator: [UInt8] = Array("\n---\n".utf8)
        var answers: [[UInt8]] = []
        var start = 0
        var index = 0
        while index + separator.count <= bytes.count {
            if bytes[index..<index + separator.count].elementsEqual(separator) {
                answers.append(index > start ? Array(bytes[start..<index]) : [])
                start = index + separator.count
                // The separator's last newline may begin the next one (an empty answer).
                index = start - 1
                continue
            }
            index += 1
        }
        answers.append(Array(bytes[start...]))
        return answers
    }
}

/// No answer (the input has none for that request, or too many requests were made).
private struct Outage: Error {}

/// Requests made for one input (the session asks from several tasks).
private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func next() -> Int { lock.withLock { count += 1; return count } }
}

/// The watches an input can name on its first line.
enum Watches {
    static let all: [(name: String, target: WatchTarget)] = {
        do {
            return [
                ("bitcoin-xpub", try WatchTarget(chain: .bitcoin, xpub: "xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8", addresses: [], token: nil)),
                ("bitcoin-addresses", try WatchTarget(chain: .bitcoin, xpub: nil, addresses: ["bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2"], token: nil)),
                ("bitcoin-address", try WatchTarget(chain: .bitcoin, xpub: nil, addresses: ["bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"], token: nil)),
                ("litecoin-xpub", try WatchTarget(chain: .litecoin, xpub: "Ltub2SSUS19CirucWFod2ZsYA2J4v4U76YiCXHdcQttnoiy5aGanFHCPDBX7utfG6f95u1cUbZJNafmvzNCzZZJTw1EmyFoL8u1gJbGM8ipu491", addresses: [], token: nil)),
                ("ethereum", try WatchTarget(chain: .ethereum, xpub: nil, addresses: ["0x52908400098527886E0F7030069857D2E4169EE7"], token: nil)),
                ("ethereum-token", try WatchTarget(chain: .ethereum, xpub: nil, addresses: ["0x27b1fdb04752bbc536007a920d24acb045561c26"], token: "0xdAC17F958D2ee523a2206206994597C13D831ec7")),
            ]
        } catch {
            fatalError("savings-fuzz: a fixed watch is refused: \(error)")
        }
    }()
}
