import Foundation
import Testing
@testable import SavingsCore

/// Watch targets are checked before any request (SPEC 10): checksums, prefixes, versions.
/// Vectors: BIP 32 test vector 1, BIP 173 / BIP 350, and well-known base58 addresses.
@Suite struct WatchTargetTests {
    static let xpub = "xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8"
    static let xprv = "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi"
    /// The same key with other chains' version bytes.
    static let zpub = "zpub6jftahH18ngZxUuv6oSniLNrBCSSE1B4EEU59bwTCEt8x6aS6b2mdfLxbS4QS53g85SWWP6wexqeer516433gYpZQoJie2tcMYdJ1SYYYAL"
    static let vpub = "vpub5SLqN2bLY4WeZJ9SmNJHsyzqVKreTXD4ZnPC22MugDNcjhKX5xNX9QiQWcE4SSRzVWyHWUihpKRT7hckDGNzVc69wSX2JPcfGeNiT5c2XZy"
    static let ltub = "Ltub2SSUS19CirucWFod2ZsYA2J4v4U76YiCXHdcQttnoiy5aGanFHCPDBX7utfG6f95u1cUbZJNafmvzNCzZZJTw1EmyFoL8u1gJbGM8ipu491"

    func refusal(_ body: () throws -> Void) -> DomainError? {
        do {
            try body()
            return nil
        } catch let error as DomainError {
            return error
        } catch {
            return nil
        }
    }

    @Test func extendedPublicKeysOfEachChainAreAccepted() throws {
        #expect(try WatchTarget(chain: .bitcoin, xpub: Self.xpub, addresses: [], token: nil).xpub == Self.xpub)
        #expect(try WatchTarget(chain: .bitcoin, xpub: Self.zpub, addresses: [], token: nil).summary == "zpub6jft…YYAL")
        #expect(try WatchTarget(chain: .bitcoinTestnet, xpub: Self.vpub, addresses: [], token: nil).xpub == Self.vpub)
        #expect(try WatchTarget(chain: .litecoin, xpub: Self.ltub, addresses: [], token: nil).xpub == Self.ltub)
    }

    @Test func aMistypedKeyOrAnotherChainsKeyOrAPrivateKeyIsRefusedWithTheReason() {
        var typo = Array(Self.xpub)
        typo[40] = typo[40] == "a" ? "b" : "a"
        let checksum = refusal { _ = try WatchTarget(chain: .bitcoin, xpub: String(typo), addresses: [], token: nil) }
        #expect(checksum?.kind == .invalidWatch)
        #expect(checksum?.message.contains("bad checksum") == true)
        #expect(checksum?.details["field"] == "xpub")

        let testnet = refusal { _ = try WatchTarget(chain: .bitcoin, xpub: Self.vpub, addresses: [], token: nil) }
        #expect(testnet?.message.contains("bitcoin-testnet") == true, "\(String(describing: testnet))")
        let secret = refusal { _ = try WatchTarget(chain: .bitcoin, xpub: Self.xprv, addresses: [], token: nil) }
        #expect(secret?.message.contains("PRIVATE") == true)
        #expect(secret?.message.contains(Self.xprv) == false, "a private key is never echoed")
        let zero = refusal { _ = try WatchTarget(chain: .bitcoin, xpub: "0OIl", addresses: [], token: nil) }
        #expect(zero?.message.contains("base58") == true)
        let account = refusal { _ = try WatchTarget(chain: .ethereum, xpub: Self.xpub, addresses: [], token: nil) }
        #expect(account?.kind == .invalidWatch)
        let both = refusal { _ = try WatchTarget(chain: .bitcoin, xpub: Self.xpub, addresses: ["1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2"], token: nil) }
        #expect(both?.message.contains("not both") == true)
    }

    @Test func addressesOfEachKindAreCheckedAgainstTheirChain() throws {
        let bitcoin = ["1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy",
                       "BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4",
                       "bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y", "BC1SW50QGDZ25J"]
        let target = try WatchTarget(chain: .bitcoin, xpub: nil, addresses: bitcoin, token: nil)
        #expect(target.addresses[2] == "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", "segwit addresses are kept in lower case")
        _ = try WatchTarget(chain: .bitcoinTestnet, xpub: nil, token: nil, addresses: [
            "mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn", "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7"])
        _ = try WatchTarget(chain: .litecoin, xpub: nil, token: nil, addresses: [
            "LW98ceYNxYki9e9QxDACLn82TtVEPm4qmy", "ltc1qqqqsyqcyq5rqwzqfpg9scrgwpugpzysn3s44dy"])

        func refused(_ chain: Chain, _ address: String) -> String? {
            refusal { _ = try WatchTarget(chain: chain, xpub: nil, addresses: [address], token: nil) }?.message
        }
        #expect(refused(.bitcoin, "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN3")?.contains("bad checksum") == true)
        #expect(refused(.bitcoin, "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5")?.contains("bad checksum") == true)
        #expect(refused(.bitcoin, "mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn")?.contains("bitcoin-testnet") == true)
        #expect(refused(.bitcoin, "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7")?.contains("bitcoin-testnet") == true)
        #expect(refused(.bitcoin, "bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7k7grplx")?.contains("bech32m") == true,
                "a segwit v1 address with the v0 checksum (BIP 350)")
        #expect(refused(.bitcoin, "Bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4")?.contains("mixes") == true)
        #expect(refused(.litecoin, "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2")?.contains("bitcoin address") == true)
        #expect(refused(.ethereum, "0x52908400098527886E0F7030069857D2E4169EE")?.contains("40 hexadecimal") == true)
        #expect(refused(.bitcoin, "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2") == nil)
        let twice = refusal { _ = try WatchTarget(chain: .ethereum, xpub: nil, token: nil, addresses: [
            "0x52908400098527886E0F7030069857D2E4169EE7", "0x52908400098527886e0f7030069857d2e4169ee7"]) }
        #expect(twice?.message.contains("twice") == true)
        let token = refusal { _ = try WatchTarget(chain: .bitcoin, xpub: Self.xpub, addresses: [], token: "0x52908400098527886E0F7030069857D2E4169EE7") }
        #expect(token?.details["field"] == "token")
        let confirmations = refusal { _ = try WatchTarget(chain: .bitcoin, xpub: Self.xpub, addresses: [], token: nil, minConfirmations: 0) }
        #expect(confirmations?.details["field"] == "min_confirmations")
    }
}

extension WatchTarget {
    init(chain: Chain, xpub: String?, token: String?, addresses: [String]) throws {
        try self.init(chain: chain, xpub: xpub, addresses: addresses, token: token)
    }
}

@Suite struct EthereumChecksumTests {
    @Test func keccakOfNothingIsTheKnownDigest() {
        let digest = Keccak256.hash([]).map { String(format: "%02x", $0) }.joined()
        #expect(digest == "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470")
        // More than one block (136 bytes) absorbed.
        #expect(Keccak256.hash(Array(repeating: 0x61, count: 200)).count == 32)
    }

    /// EIP-55's own examples: all upper, all lower, and mixed.
    @Test func checksummedAddressesFromEIP55AreAcceptedAndAMistypedCaseIsNot() throws {
        let examples = ["0x52908400098527886E0F7030069857D2E4169EE7", "0x8617E340B3D01FA5F11F306F4090FD50E238070D",
                        "0xde709f2102306220921060314715629080e2fb77", "0x27b1fdb04752bbc536007a920d24acb045561c26",
                        "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
                        "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB", "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb"]
        for address in examples { #expect(throws: Never.self) { _ = try WatchTarget.address(address, chain: .ethereum, field: "addresses") } }
        // One letter's case changed: a typo the checksum catches.
        do {
            _ = try WatchTarget.address("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", chain: .ethereum, field: "addresses")
            Issue.record("a mistyped case was accepted")
        } catch let error as DomainError {
            #expect(error.kind == .invalidWatch)
            #expect(error.message.contains("EIP-55"))
        }
    }
}

/// Public derivation (BIP 32 CKDpub) and each key kind's addresses. Vectors: BIP 84's account
/// (its published first receive and change addresses), and the BIP 32 test key read as other
/// versions, derived by an independent implementation.
@Suite struct ExtendedPublicKeyTests {
    @Test func ripemd160MatchesItsPublishedVectors() {
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(RIPEMD160.hash([])) == "9c1185a5c5e9fc54612808977ee8f548b2258d31")
        #expect(hex(RIPEMD160.hash(Array("abc".utf8))) == "8eb208f7e05d987a9b044a8e98c6b087f15a0bfc")
    }

    @Test func bip84AccountAddresses() throws {
        let zpub = try ExtendedPublicKey("zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs",
                                         chain: .bitcoin)
        #expect(try zpub.address(change: 0, index: 0) == "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu")
        #expect(try zpub.address(change: 0, index: 1) == "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g")
        #expect(try zpub.address(change: 1, index: 0) == "bc1q8c6fshw2dlwun7ekn9qwf37cu2rn755upcp6el")
    }

    @Test func eachVersionDerivesItsOwnKindOfAddress() throws {
        #expect(try ExtendedPublicKey(WatchTargetTests.xpub, chain: .bitcoin).address(change: 0, index: 1) == "13Q3u97PKtyERBpXg31MLoJbQsECgJiMMw")
        let ypub = "ypub6QqdH2c5z7967BioGSfAWFHM1EHzHPBZK7wrND3ZpEWFtzmCqvsD1bgpaE6pSAPkiSKhkuWPCJV6mZTSNMd2tK8xYTcJ48585pZecmSUzWp"
        #expect(try ExtendedPublicKey(ypub, chain: .bitcoin).address(change: 0, index: 0) == "3AfyxhpBVVLmBR4ZYX2onGzRqjv5QZ7FqD")
        #expect(try ExtendedPublicKey(WatchTargetTests.ltub, chain: .litecoin).address(change: 0, index: 0) == "LLRHKXLUaVyAxD9t8FcePDZ3QyBf7E4gu5")
        #expect(try ExtendedPublicKey(WatchTargetTests.vpub, chain: .bitcoinTestnet).address(change: 1, index: 5)
            == "tb1q6cqdvcx40upr5nzkm9kvn60dlu7l2jmls0x8du")
        // Each address passes the checks an address given by hand passes.
        _ = try WatchTarget(chain: .bitcoin, xpub: nil, addresses: ["13Q3u97PKtyERBpXg31MLoJbQsECgJiMMw", "3AfyxhpBVVLmBR4ZYX2onGzRqjv5QZ7FqD"],
                            token: nil)
    }
}

@Suite struct SmallestUnitTests {
    @Test func satoshiAndWeiConvertExactlyBothWays() throws {
        #expect(try SmallestUnit.amount("1", decimals: 18) == Decimal(string: "0.000000000000000001"))
        #expect(try SmallestUnit.amount("1000000000000000000000000000", decimals: 18) == Decimal(string: "1000000000"))
        #expect(try SmallestUnit.amount("2100000000000000", decimals: 8) == Decimal(string: "21000000"))
        #expect(try SmallestUnit.amount("123456789012345678901234567", decimals: 18) == Decimal(string: "123456789.012345678901234567"))
        #expect(try SmallestUnit.amount("0", decimals: 6) == 0)
        #expect(SmallestUnit.digits(try SmallestUnit.amount("123456789012345678901234567", decimals: 18), decimals: 18) == "123456789012345678901234567")
        #expect(SmallestUnit.digits(Decimal(string: "-0.00000001")!, decimals: 8) == "-1")
        #expect(throws: DomainError.self) { try SmallestUnit.amount("-5", decimals: 8) }
        #expect(throws: DomainError.self) { try SmallestUnit.amount("1.5", decimals: 8) }
        #expect(throws: DomainError.self) { try SmallestUnit.amount("5", decimals: 24) }
        #expect(throws: DomainError.self) { try SmallestUnit.amount(String(repeating: "9", count: 39), decimals: 8) }
    }

    @Test func theNetAmountOfASendIncludesItsFee() throws {
        // 0.5 BTC in from the set, 0.2 back to change in the set, 0.29990000 to someone else: fee 10,000 sat.
        let net = try ChainTransaction.net(credits: ["20000000"], debits: ["50000000"], decimals: 8)
        #expect(net == Decimal(string: "-0.3"))
    }

    /// Values that fit a machine integer add up as integers; the sum is the decimal path's, to
    /// the last unit, and what does not fit (19 digits and more, an overflow, a sign, a point)
    /// goes the decimal way, which refuses what is not an amount.
    @Test func theIntegerNetIsTheDecimalNet() throws {
        func decimalNet(_ credits: [String], _ debits: [String], _ decimals: Int) throws -> Decimal {
            var total = Decimal(0)
            for value in credits { total += try SmallestUnit.amount(value, decimals: decimals) }
            for value in debits { total -= try SmallestUnit.amount(value, decimals: decimals) }
            return total
        }
        var generator = SeededGenerator(state: 51)
        for _ in 0..<2_000 {
            let credits = (0..<Int.random(in: 0...3, using: &generator)).map { _ in String(UInt64.random(in: 0...999_999_999_999_999_999, using: &generator)) }
            let debits = (0..<Int.random(in: 0...3, using: &generator)).map { _ in String(UInt64.random(in: 0...99_999_999, using: &generator)) }
            let decimals = [0, 8, 18][Int.random(in: 0...2, using: &generator)]
            #expect(try ChainTransaction.net(credits: credits, debits: debits, decimals: decimals) == (try decimalNet(credits, debits, decimals)))
        }
        #expect(ChainTransaction.integerNet(credits: ["999999999999999999", "999999999999999999"], debits: []) == 1_999_999_999_999_999_998)
        #expect(ChainTransaction.integerNet(credits: ["1000000000000000000"], debits: []) == nil, "19 digits")
        #expect(ChainTransaction.integerNet(credits: Array(repeating: "999999999999999999", count: 10), debits: []) == nil, "overflow")
        #expect(ChainTransaction.integerNet(credits: ["-5"], debits: []) == nil)
        #expect(try ChainTransaction.net(credits: ["1000000000000000000000"], debits: ["1"], decimals: 18) == Decimal(string: "999.999999999999999999"))
        #expect(throws: DomainError.self) { try ChainTransaction.net(credits: ["1.5"], debits: [], decimals: 8) }
        #expect(throws: DomainError.self) { try ChainTransaction.net(credits: ["5"], debits: [], decimals: 24) }
        #expect(try ChainTransaction.net(credits: [], debits: [], decimals: 8) == 0)
    }
}

@Suite struct ChainSyncPlanTests {
    func tx(_ id: String, _ amount: String, confirmations: Int) -> ChainTransaction {
        ChainTransaction(txid: id, amount: Decimal(string: amount)!, blockTime: confirmations > 0 ? Date(timeIntervalSince1970: 1_700_000_000) : nil,
                         confirmations: confirmations)
    }

    @Test func onlyNewAndPendingTransactionsAreFetchedAndVanishedOnesRemoved() {
        let plan = ChainSyncPlan(listed: ["m1", "n1", "a", "b", "c"], unconfirmed: ["m1", "b"], stored: ["a", "b", "c", "gone"], pending: ["p-gone", "n1"])
        #expect(plan.wanted == ["m1", "n1", "b"])
        #expect(plan.removed == ["b", "gone"], "back in the mempool or reorganised away")
        let quiet = ChainSyncPlan(listed: ["a", "b"], unconfirmed: [], stored: ["a", "b"], pending: [])
        #expect(quiet.wanted.isEmpty)
        #expect(quiet.removed.isEmpty)
    }

    @Test func shallowTransactionsArePendingAndReconciliationAllowsForThem() {
        let split = ChainSyncPlan.split([tx("deep", "1", confirmations: 6), tx("shallow", "0.5", confirmations: 2), tx("mempool", "0.1", confirmations: 0)],
                                        minConfirmations: 3)
        #expect(split.store.map(\.txid) == ["deep"])
        #expect(split.pending.map(\.txid) == ["shallow", "mempool"])
        #expect(ChainSyncPlan.reconciled(stored: 1, reported: Decimal(string: "1.5")!, pending: split.pending))
        #expect(!ChainSyncPlan.reconciled(stored: 1, reported: Decimal(string: "1.6")!, pending: split.pending))
    }
}
