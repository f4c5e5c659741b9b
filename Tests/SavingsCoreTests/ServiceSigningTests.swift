import Crypto
import Foundation
import Testing
@testable import SavingsCore

/// Each linked service's authentication, checked against its own documentation's example.
@Suite struct ServiceSigningTests {
    /// Kraken's example (https://docs.kraken.com/api/docs/guides/spot-rest-auth).
    @Test func krakensDocumentedExampleSigns() throws {
        let sign = try ServiceSigning.kraken(
            path: "/0/private/AddOrder", nonce: "1616492376594",
            body: "nonce=1616492376594&ordertype=limit&pair=XBTUSD&price=37500&type=buy&volume=1.25",
            secret: "kQH5HW/8p1uGOVjbgWA7FunAmGO8lsSUXNsu3eow76sz84Q18fWxnyRzBHCd3pd5nE9qa99HAZtuZuj6F1huXg==")
        #expect(sign == "4/dpxb3iT4tp/ZCVEwSnEsLxx0bqyhLpdfOpc6fn7OR8+UClSV5n9E6aSS8MPtnRfp32bAb0nmbRn6H8ndwLUQ==")
        #expect(throws: ServiceSigning.Failure.self) { try ServiceSigning.kraken(path: "/0/private/Balance", nonce: "1", body: "nonce=1", secret: "not base64!") }
    }

    /// Binance's HMAC example (binance/binance-spot-api-docs, rest-api.md).
    @Test func binancesDocumentedExampleSigns() {
        let signature = ServiceSigning.binance(
            payload: "symbol=LTCBTC&side=BUY&type=LIMIT&timeInForce=GTC&quantity=1&price=0.1&recvWindow=5000&timestamp=1499827319559",
            secret: "NhqPtmdSJYdKjVHjA7PZj4Mge3R5YNiP1e3UZjInClVN65XAbvqqM6A7H5fATj0j")
        #expect(signature == "c8db56825ae71d6d79447849e617115f4a920fa2acdcab2b053c4b2838bd6b71")
    }

    /// A CDP key's JWT: the documented header and claims, and an ES256 signature (raw r‖s) that
    /// the key's public half verifies. The key is a test key made for this test
    /// (`openssl ecparam -name prime256v1 -genkey -noout`), in the SEC1 form Coinbase hands out.
    @Test func aCoinbaseJWTCarriesTheDocumentedClaimsAndVerifies() throws {
        let pem = """
            -----BEGIN EC PRIVATE KEY-----
            MHcCAQEEIBsUKwcsK/NQwboYgnwY+X/0ekotv48NoACT4WB2UlbLoAoGCCqGSM49
            AwEHoUQDQgAEYfILNOYnyVRWCMcDZ93gR4A2Y4nuMv2DurCWOvYIlmTkDnVqlV1T
            VI/fnCf1Nr15OniFU5QUad4Q7RTw+T6JyQ==
            -----END EC PRIVATE KEY-----

            """
        let name = "organizations/0b2a/apiKeys/7c1f"
        let jwt = try ServiceSigning.coinbase(keyName: name, privateKeyPEM: pem.replacingOccurrences(of: "\n", with: "\\n"), method: "GET",
                                              host: "api.coinbase.com", path: "/v2/accounts",
                                              now: Date(timeIntervalSince1970: 1_795_687_200), nonce: "5f1e")
        let parts = jwt.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        func decoded(_ part: String) throws -> [String: Any] {
            var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while text.count % 4 != 0 { text += "=" }
            let data = try #require(Data(base64Encoded: text))
            return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        }
        let header = try decoded(parts[0]), claims = try decoded(parts[1])
        #expect(header["alg"] as? String == "ES256" && header["kid"] as? String == name && header["nonce"] as? String == "5f1e")
        #expect(claims["iss"] as? String == "cdp" && claims["sub"] as? String == name)
        #expect(claims["nbf"] as? Int == 1_795_687_200 && claims["exp"] as? Int == 1_795_687_320)
        #expect(claims["uri"] as? String == "GET api.coinbase.com/v2/accounts")
        var signature64 = parts[2].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while signature64.count % 4 != 0 { signature64 += "=" }
        let raw = try #require(Data(base64Encoded: signature64))
        #expect(raw.count == 64, "JOSE's r‖s, not DER")
        let key = try P256.Signing.PrivateKey(pemRepresentation: pem)
        #expect(key.publicKey.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: raw), for: Data((parts[0] + "." + parts[1]).utf8)))
        #expect(throws: ServiceSigning.Failure.self) {
            try ServiceSigning.coinbase(keyName: name, privateKeyPEM: "secret", method: "GET", host: "api.coinbase.com", path: "/v2/accounts",
                                        now: Date(), nonce: "1")
        }
    }

    /// SimpleFIN's example token (protocol.md §3) and an access URL as a claim returns it.
    @Test func simpleFINsTokenAndAccessURLAreRead() throws {
        let claim = try SimpleFINAccess.claimURL(setupToken: "aHR0cHM6Ly9icmlkZ2Uuc2ltcGxlZmluLm9yZy9zaW1wbGVmaW4vY2xhaW0vZGVtbw==")
        #expect(claim.absoluteString == "https://bridge.simplefin.org/simplefin/claim/demo")
        let access = try SimpleFINAccess.split(accessURL: "https://user123:pass456@bridge.simplefin.org/simplefin")
        #expect(access.base.absoluteString == "https://bridge.simplefin.org/simplefin")
        #expect(access.authorization == "Basic dXNlcjEyMzpwYXNzNDU2")
        // http, a token of something else, an access URL without credentials: refused, and the
        // refusal never repeats the secret.
        let plain = Data("http://bridge.simplefin.org/simplefin/claim/demo".utf8).base64EncodedString()
        for token in [plain, "bm90IGEgdXJs", String(repeating: "A", count: 4_000)] {
            #expect(throws: ServiceSigning.Failure.self) { try SimpleFINAccess.claimURL(setupToken: token) }
        }
        do {
            _ = try SimpleFINAccess.split(accessURL: "http://user123:pass456@bridge.simplefin.org/simplefin")
            Issue.record("http was taken")
        } catch {
            #expect(!error.description.contains("pass456"))
        }
        #expect(throws: ServiceSigning.Failure.self) { try SimpleFINAccess.split(accessURL: "https://bridge.simplefin.org/simplefin") }
        // Plain http to this machine's loopback (a test server) is taken; to anywhere else it is not.
        let local = try SimpleFINAccess.split(accessURL: "http://user123:pass456@127.0.0.1:8080/simplefin")
        #expect(local.base.absoluteString == "http://127.0.0.1:8080/simplefin" && local.authorization == "Basic dXNlcjEyMzpwYXNzNDU2")
        let localToken = Data("http://localhost:8080/simplefin/claim/demo".utf8).base64EncodedString()
        #expect(try SimpleFINAccess.claimURL(setupToken: localToken).host == "localhost")
        for url in ["http://u:p@127.0.0.1.example.com/simplefin", "http://u:p@127.0.0.evil/simplefin", "http://u:p@10.0.0.1/simplefin", "ftp://u:p@127.0.0.1/simplefin"] {
            #expect(throws: ServiceSigning.Failure.self, "\(url)") { try SimpleFINAccess.split(accessURL: url) }
        }
    }
}

/// What a linked account's name says and what a sync removes (issue 50).
@Suite struct AccountLinkTests {
    /// Kraken's codes: https://support.kraken.com/hc/en-us/articles/360001185506 (X/Z in front
    /// of the older four-letter codes, XBT for bitcoin, XDG for dogecoin, suffixes for views).
    @Test func krakenCodesNameTheirCurrencies() {
        let expected = ["XXBT": "BTC", "XBT": "BTC", "XETH": "ETH", "ZEUR": "EUR", "ZUSD": "USD", "XXDG": "DOGE", "ETH2.S": "ETH",
                        "ETH2": "ETH", "USD.M": "USD", "DOT.S": "DOT", "BTC": "BTC", "EUR": "EUR", "SOL": "SOL", "XTZ": "XTZ", "ZEC": "ZEC", "XZEC": "ZEC"]
        for (code, currency) in expected { #expect(LinkedService.krakenCurrency(code) == currency, "\(code)") }
    }

    @Test func removedRowsAreThoseOfTheWindowNoLongerListed() {
        let day: TimeInterval = 86_400
        let since = Date(timeIntervalSince1970: 10 * day)
        let stored = ["a": Date(timeIntervalSince1970: 11 * day), "b": Date(timeIntervalSince1970: 12 * day), "old": Date(timeIntervalSince1970: 9 * day)]
        let covered = Date(timeIntervalSince1970: 10 * day)
        #expect(LinkSyncPlan.removed(stored: stored, listed: ["a"], since: since, coveredFrom: covered) == ["b"], "a row older than the window is not judged")
        #expect(LinkSyncPlan.removed(stored: stored, listed: ["a"], since: nil, coveredFrom: Date(timeIntervalSince1970: 0)) == ["b", "old"])
        // A service whose answers reach back only to day 12 (a bank's short history) says nothing of day 11.
        #expect(LinkSyncPlan.removed(stored: stored, listed: [], since: nil, coveredFrom: Date(timeIntervalSince1970: 12 * day)) == ["b"])
        #expect(LinkSyncPlan.removed(stored: stored, listed: [], since: nil, coveredFrom: nil) == [], "no row given: nothing judged")
    }

    /// A first sync reads everything; later ones from 35 days before the newest row, or the
    /// last sync when nothing is stored (an account without rows is not read from its start).
    @Test func aSyncStartsWhereTheLastCouldHaveMissedSomething() {
        let day: TimeInterval = 86_400
        #expect(LinkSyncPlan.since(newest: Date(timeIntervalSince1970: 100 * day), lastSync: nil) == nil)
        #expect(LinkSyncPlan.since(newest: Date(timeIntervalSince1970: 100 * day + 0.5), lastSync: Date(timeIntervalSince1970: 200 * day))
            == Date(timeIntervalSince1970: 65 * day))
        #expect(LinkSyncPlan.since(newest: nil, lastSync: Date(timeIntervalSince1970: 200 * day)) == Date(timeIntervalSince1970: 165 * day))
    }

    @Test func accountsAreAServicesPlainName() throws {
        #expect(try AccountLink.checkAccount(" XXBT ") == "XXBT")
        #expect(throws: DomainError.self) { try AccountLink.checkAccount("two words") }
        #expect(throws: DomainError.self) { try AccountLink.checkAccount("") }
        #expect(throws: DomainError.self) { try LinkedService(name: "mtgox") }
        #expect(try LinkedService(name: "Kraken") == .kraken)
    }
}
