import Crypto
import Foundation

/// How each service an asset can be linked to (issue 50) wants its requests authenticated, as
/// its own documentation says; pure functions, checked against the documentation's examples.
public enum ServiceSigning {
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// The secret is not in the form the service gives it out (its words say which).
        case badSecret(String)

        public var description: String {
            switch self {
            case .badSecret(let why): why
            }
        }
    }

    /// Kraken's `API-Sign`: HMAC-SHA512 of the URI path followed by SHA-256(nonce + POST
    /// data), keyed with the base64-decoded secret, in base64.
    /// https://docs.kraken.com/api/docs/guides/spot-rest-auth ("Authentication"; its example
    /// is the unit test's vector).
    public static func kraken(path: String, nonce: String, body: String, secret: String) throws(Failure) -> String {
        guard let key = Data(base64Encoded: secret.trimmingCharacters(in: .whitespacesAndNewlines)), !key.isEmpty else {
            throw .badSecret("a Kraken private key is base64, as Kraken shows it once when the key is made")
        }
        let inner = SHA256.hash(data: Data((nonce + body).utf8))
        var message = Data(path.utf8)
        message.append(contentsOf: inner)
        let mac = HMAC<SHA512>.authenticationCode(for: message, using: SymmetricKey(data: key))
        return Data(mac).base64EncodedString()
    }

    /// Binance's `signature`: HMAC-SHA256 of the query string followed by the body, keyed with
    /// the secret as text, in lowercase hexadecimal.
    /// https://github.com/binance/binance-spot-api-docs/blob/master/rest-api.md ("SIGNED
    /// (TRADE and USER_DATA) Endpoint security"; its HMAC example is the unit test's vector).
    public static func binance(payload: String, secret: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data(payload.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return mac.map { String(format: "%02x", $0) }.joined()
    }

    /// A Coinbase CDP API key's JWT for one request: ES256 over `header.claims` (base64url), the
    /// header naming the key (`kid`) with a random `nonce`, the claims `iss` "cdp", `sub` the key
    /// name, `nbf` now, `exp` two minutes on, and `uri` the method, host and path (no query).
    /// https://docs.cdp.coinbase.com/get-started/authentication/jwt-authentication and
    /// coinbase/coinbase-advanced-py `coinbase/jwt_generator.py`.
    public static func coinbase(keyName: String, privateKeyPEM: String, method: String, host: String, path: String,
                                now: Date, nonce: String) throws(Failure) -> String {
        let key: P256.Signing.PrivateKey
        do {
            // Keys are handed out as PEM with "\n" written out in the JSON file; either form is read.
            key = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM.replacingOccurrences(of: "\\n", with: "\n"))
        } catch {
            throw .badSecret("a Coinbase API key's secret is an EC private key in PEM (-----BEGIN EC PRIVATE KEY-----), as Coinbase gives it for an ECDSA key")
        }
        let seconds = Int(now.timeIntervalSince1970)
        let header: [(String, String)] = [("alg", "ES256"), ("kid", keyName), ("nonce", nonce), ("typ", "JWT")]
        let header64 = base64URL(Data(jsonObject(header.map { ($0.0, jsonString($0.1)) }).utf8))
        let claims: [(String, String)] = [
            ("exp", String(seconds + 120)), ("iss", jsonString("cdp")), ("nbf", String(seconds)), ("sub", jsonString(keyName)),
            ("uri", jsonString("\(method) \(host)\(path)")),
        ]
        let claims64 = base64URL(Data(jsonObject(claims).utf8))
        let signingInput = header64 + "." + claims64
        guard let signature = try? key.signature(for: Data(signingInput.utf8)) else {
            throw .badSecret("the Coinbase key could not sign")
        }
        // JOSE wants the raw r‖s (64 bytes), not DER.
        return signingInput + "." + base64URL(signature.rawRepresentation)
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// A JSON object of members already written as JSON values, in the order given.
    private static func jsonObject(_ members: [(String, String)]) -> String {
        "{" + members.map { "\(jsonString($0.0)):\($0.1)" }.joined(separator: ",") + "}"
    }

    private static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// SimpleFIN's setup token and access URL (the protocol: https://www.simplefin.org/protocol.html,
/// simplefin/simplefin.github.com `protocol.md`): the token is the base64 of a claim URL; the
/// access URL a claim returns holds the credentials, and is the secret. The protocol's checklist
/// asks for https only; plain http is taken for a server on this machine's loopback alone (a
/// test server), where nothing leaves the machine.
public enum SimpleFINAccess {
    /// The claim URL a setup token holds: https only, at most 2 KiB.
    public static func claimURL(setupToken: String) throws(ServiceSigning.Failure) -> URL {
        let token = setupToken.trimmingCharacters(in: .whitespacesAndNewlines)
        guard token.utf8.count <= 2_048, let data = Data(base64Encoded: token), let text = String(data: data, encoding: .utf8),
              let url = URL(string: text), secure(scheme: url.scheme, host: url.host) else {
            throw .badSecret("a SimpleFIN setup token is the base64 text SimpleFIN Bridge gives once, for an https claim address")
        }
        return url
    }

    /// An access URL split into the address to ask (without its credentials) and the
    /// `Authorization: Basic` value for them (clients do not send credentials written in a URL
    /// reliably, so the header is made here).
    public static func split(accessURL: String) throws(ServiceSigning.Failure) -> (base: URL, authorization: String) {
        let text = accessURL.trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.utf8.count <= 2_048, var parts = URLComponents(string: text), secure(scheme: parts.scheme, host: parts.host),
              let user = parts.percentEncodedUser, let password = parts.percentEncodedPassword else {
            throw .badSecret("a SimpleFIN access URL is https://USER:PASSWORD@HOST/PATH, as a claim returns it")
        }
        let credentials = (user.removingPercentEncoding ?? user) + ":" + (password.removingPercentEncoding ?? password)
        parts.user = nil
        parts.password = nil
        guard let base = parts.url else { throw .badSecret("a SimpleFIN access URL is https://USER:PASSWORD@HOST/PATH") }
        return (base, "Basic " + Data(credentials.utf8).base64EncodedString())
    }

    /// https to any host; http only to the loopback (127.0.0.0/8, ::1, localhost).
    static func secure(scheme: String?, host: String?) -> Bool {
        guard let host, !host.isEmpty else { return false }
        switch scheme?.lowercased() {
        case "https": return true
        case "http":
            let octets = host.split(separator: ".", omittingEmptySubsequences: false)
            return host == "localhost" || host == "::1" || host == "[::1]"
                || octets.count == 4 && octets[0] == "127" && octets.allSatisfy { $0.count <= 3 && UInt8($0) != nil }
        default: return false
        }
    }
}
