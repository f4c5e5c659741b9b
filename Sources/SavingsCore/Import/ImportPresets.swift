// Generated from config/import/*.toml by ImportPresetTests (SAVINGSD_UPDATE_DOCS=1 regenerates it).
// The shipped presets are those files; this copy is what the daemon reads.

public enum ImportPresets {
    /// Each preset's rules file, by name.
    public static let texts: [String: String] = [
        "binance-deposits": #"""
# Binance's deposit history (Wallet > Transaction History > Deposit > Export), one row a
# deposit, every coin in one file, newest first. Two layouts, both read (BittyTax's Binance
# parsers, BittyTax/BittyTax src/bittytax/conv/parsers/binance.py, issue #303, name them):
#   Date(UTC+0),Coin,Network,Amount,Address,TXID,Status                 (current; 26-03-25 18:02:41)
#   Date(UTC),Coin,Network,Amount,TransactionFee,Address,TXID,SourceAddress,PaymentID,Status
#                                                                       (older, shared with withdrawals;
#                                                                        2023-06-10 16:26:30)
# (Older files still, without Network or with a first column "Date", as BittyTax reads them, are
# read too.) Dates are UTC. Amount is what was credited; only completed deposits moved money.
#   savingsctl tx import deposits.csv --rules binance-deposits --map BTC="Binance BTC"

date_format = ["yy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm:ss"]
timezone = "UTC"

[columns]
date = ["Date(UTC+0)", "Date(UTC)", "Date"]
amount = "Amount"
asset = "Coin"
note = "Binance deposit {Network?}"
external_id = "{TXID}"

[assets]
# BTC = "Binance BTC"

# Anything not completed (pending, processing, failed) did not arrive (yet).
[[when]]
column = "Status"
matches = "^(?!Completed$)"
skip = true
"""#,
        "binance-withdrawals": #"""
# Binance's withdrawal history (Wallet > Transaction History > Withdraw > Export), one row a
# withdrawal, every coin in one file, newest first. Two layouts, both read (BittyTax's Binance
# parsers, BittyTax/BittyTax src/bittytax/conv/parsers/binance.py, issue #303, name them; also
# metko21neon/application src/assets/withdraws.ts):
#   Date(UTC+0),Coin,Network,Amount,Fee,Address,TXID,Status             (current; 26-03-25 18:02:41)
#   Date(UTC),Coin,Network,Amount,TransactionFee,Address,TXID,SourceAddress,PaymentID,Status
#                                                                       (older; 2023-06-10 16:26:30)
# (Older files still, without Network or with a first column "Date", as BittyTax reads them, are
# read too.) Dates are UTC. Amount left the account and the fee was paid on top of it, in the same coin
# (as BittyTax books it): a withdrawal of 800 with fee 1 takes 801. Only completed withdrawals
# moved money (a rejected one has no TXID).
#   savingsctl tx import withdrawals.csv --rules binance-withdrawals --map USDT="Binance USDT"

date_format = ["yy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm:ss"]
timezone = "UTC"

[columns]
date = ["Date(UTC+0)", "Date(UTC)", "Date"]
amount_out = "Amount"
fee = ["Fee", "TransactionFee"]
asset = "Coin"
note = "Binance withdrawal {Network?} to {Address}"
external_id = "{TXID}"

[assets]
# USDT = "Binance USDT"

# Anything not completed (processing, cancelled, failed) did not leave (yet).
[[when]]
column = "Status"
matches = "^(?!Completed$)"
skip = true
"""#,
        "coinbase": #"""
# Coinbase's transaction history (Statements > Generate report > CSV). Three layouts, all read
# (provinzio/CoinTaxman src/book.py, coinbase_v2/v3/v4, PR #172; BittyTax/BittyTax
# src/bittytax/conv/parsers/coinbase.py):
#   current ("V4", 2024 on): "", Transactions, User,…, then ID,Timestamp,Transaction Type,Asset,
#     Quantity Transacted,Price Currency,Price at Transaction,Subtotal,Total (inclusive of fees
#     and/or spread),Fees and/or Spread,Notes (some reports add Sender Address,Recipient Address)
#     — money cells carry the currency sign ("€40512.33", "-€180.01"), quantities are negative
#     for what left (Sell, Send; a Convert's either way), newest first, ID identifies the row;
#   2023: a few lines of explanation, then Timestamp,Transaction Type,Asset,Quantity Transacted,
#     Spot Price Currency,Spot Price at Transaction,Subtotal,Total (inclusive of fees and/or
#     spread),Fees and/or Spread,Notes — quantities unsigned;
#   2022: a 7-line preamble with a quoted disclaimer, then Timestamp,Transaction Type,Asset,
#     Quantity Transacted,Spot Price Currency,Spot Price at Transaction,Subtotal,
#     Total (inclusive of fees),Fees,Notes — quantities unsigned.
# Quantity Transacted is the asset's amount; fees are charged in the fiat currency and are not
# subtracted. Dates are UTC: "2024-03-01T09:15:02Z", or "2024-03-01 09:15:02 UTC".
# A Convert is one row, of the asset spent; what it bought is only in Notes
# ("Converted 0.001 BTC to 0.0175 ETH"): the second [[when]] books it as a second leg.
#   savingsctl tx import coinbase.csv --rules coinbase --map BTC="Coinbase BTC" --map ETH="Coinbase ETH"

skip = "^\"?(ID|Timestamp)\"?,"
date_format = ["iso8601", "yyyy-MM-dd HH:mm:ss 'UTC'"]
timezone = "UTC"
thousands_separator = ","

[columns]
date = "Timestamp"
amount = "Quantity Transacted"
asset = "Asset"
note = "Coinbase {Transaction Type}: {Notes}"
external_id = "{ID?}"

[assets]
# BTC = "Coinbase BTC"

# Older reports write every quantity unsigned: the type says which way the asset moved.
[[when]]
column = "Transaction Type"
matches = "^(Sell|Send|Convert|Withdrawal|Advanced Trade Sell)$"
direction = "out"

[[when]]
column = "Transaction Type"
matches = "^Convert$"
[when.second_leg]
column = "Notes"
matches = '^Converted [\d.,]+ \S+ to (?<amount>[\d.,]+) (?<asset>\S+)'
"""#,
        "dkb": #"""
# DKB's Girokonto statement as CSV (2023 and later; "Umsätze" > CSV-Export), as
# siddhantgoel/beancount-dkb reads it (beancount_dkb/extractors/ec.py, V2Extractor, and
# tests/test_ec_v2.py; issues #123, #146, #216) and hamvocke/dkb2homebank's testfiles/giro.csv:
# UTF-8 with a byte order mark, semicolons, every field quoted, newest first, a 4-line preamble
# (account, empty, "Kontostand vom …", empty), then
#   "Buchungsdatum";"Wertstellung";"Status";"Zahlungspflichtige*r";"Zahlungsempfänger*in";
#   "Verwendungszweck";"Umsatztyp";"IBAN";"Betrag (€)";"Gläubiger-ID";"Mandatsreferenz";
#   "Kundenreferenz"
# Dates "dd.MM.yy"; amounts "-1.234,56", "-1.450" or (late 2024) "-84,00 €". Until late 2023
# the amount column was "Betrag", as read too. Rows not yet booked say Status "Vorgemerkt" and
# are skipped. One account a file: name the asset.
#   savingsctl tx import "DKB Giro" umsaetze.csv --rules dkb

skip = "^\"?Buchungsdatum\"?;"
separator = ";"
encoding = "utf-8-bom"
decimal_mark = ","
thousands_separator = "."
number_affixes = ["€"]
date_format = ["dd.MM.yy", "dd.MM.yyyy"]
timezone = "Europe/Berlin"

[columns]
date = "Buchungsdatum"
amount = ["Betrag (€)", "Betrag (EUR)", "Betrag"]
note = "{Zahlungspflichtige*r}: {Verwendungszweck}"

# Money out: the other party is the payee.
[[when]]
column = ["Betrag (€)", "Betrag (EUR)", "Betrag"]
matches = "^\\s*-"
note = "{Zahlungsempfänger*in}: {Verwendungszweck}"

[[when]]
column = "Status"
matches = "^Vorgemerkt$"
skip = true
"""#,
        "generic-bank-de": #"""
# A German bank's account statement as CSV: semicolons, decimal commas ("1.234,56"), dates
# "dd.MM.yy", Windows-1252 text. The columns are the Sparkasse's "CSV-CAMT V2" export, which
# many German banks' exports resemble:
#   "Auftragskonto";"Buchungstag";"Valutadatum";"Buchungstext";"Verwendungszweck";
#   "Glaeubiger ID";"Mandatsreferenz";"Kundenreferenz (End-to-End)";"Sammlerreferenz";
#   "Lastschrift Ursprungsbetrag";"Auslagenersatz Ruecklastschrift";
#   "Beguenstigter/Zahlungspflichtiger";"Kontonummer/IBAN";"BIC (SWIFT-Code)";"Betrag";
#   "Waehrung";"Info"
# (as read by beancount-import-sparkasse's CsvCamtImporter, which lists the same fields).
# One account a file: name the asset.
#   savingsctl tx import Girokonto "umsaetze.csv" --rules generic-bank-de
# Another bank: copy this file, change the column names, and try it with --dry-run.

separator = ";"
encoding = "windows-1252"
decimal_mark = ","
thousands_separator = "."
date_format = ["dd.MM.yy", "dd.MM.yyyy"]
timezone = "Europe/Berlin"

[columns]
date = "Buchungstag"
amount = "Betrag"
note = "{Beguenstigter/Zahlungspflichtiger}: {Verwendungszweck}"

# Statements list reservations the bank has not booked yet ("Umsatz vorgemerkt").
[[when]]
column = "Info"
matches = "vorgemerkt"
skip = true
"""#,
        "ing": #"""
# ING Germany's account statement as CSV ("Umsatzanzeige"), as siddhantgoel/beancount-ing
# reads it (beancount_ing/ec.py and tests/test_ec_importer.py; bank2ynab's [DE ING-DiBa]):
# ISO-8859-1, semicolons, decimal commas, a 13-line preamble of the statement's metadata
# (Umsatzanzeige, IBAN, Kontoname, Bank, Kunde, Zeitraum, Saldo, Sortierung, a note on what the
# file holds, empty lines; some files add ";Letztes Update: aktuell"), then
#   Buchung;Valuta;Auftraggeber/Empfänger;Buchungstext;Verwendungszweck;Saldo;Währung;Betrag;Währung
# Newest first; Saldo is the running balance after each booking, checked. Dates "dd.MM.yyyy".
# One account a file: name the asset.
#   savingsctl tx import "ING Giro" Umsatzanzeige.csv --rules ing

skip = "^Buchung;"
separator = ";"
encoding = "iso-8859-1"
decimal_mark = ","
thousands_separator = "."
date_format = ["dd.MM.yyyy", "dd.MM.yy"]
timezone = "Europe/Berlin"

[columns]
date = "Buchung"
amount = "Betrag"
balance = "Saldo"
note = "{Auftraggeber/Empfänger}: {Verwendungszweck}"
"""#,
        "kraken-ledgers": #"""
# Kraken's ledger export (History > Export > Ledgers: ledgers.csv), every asset in one file.
# Kraken documents the fields in "How to interpret Ledger history fields"
# (https://support.kraken.com/hc/en-us/articles/360001169383). Four layouts, all read:
#   "txid","refid","time","type","aclass","asset","amount","fee","balance"              (9 columns)
#   "txid","refid","time","type","subtype","aclass","asset","amount","fee","balance"    (10)
#   "txid","refid","time","type","subtype","aclass","asset","wallet","amount","fee","balance"  (11)
#   "txid","refid","time","type","subtype","aclass","subclass","asset","wallet","amount","fee","balance"  (12, 2025+)
# time is UTC ("2024-03-01 09:15:02", sometimes with a fraction of a second); amount is signed;
# the fee is paid from the same asset; balance = old balance + amount - fee. Some exports write
# fees negative and still deduct them (CoinTaxman issues #162, #163): a fee is paid whatever its sign.
# A deposit or withdrawal is listed twice: first with an empty txid and an empty balance (not
# yet credited), then again when credited (Kraken support, "Why there are duplicate entries
# for deposits/withdrawals"; provinzio/CoinTaxman issues #87 and #97, PR #9). The first is
# skipped, and its empty balance keeps it out of the balance check.
# Asset codes are Kraken's: XXBT (bitcoin), XETH, ZEUR, ZUSD, ..., and since mid-2024 BTC, EUR,
# ... (BittyTax issue #372, CoinTaxman issue #185). Map the ones you track:
#   savingsctl tx import ledgers.csv --rules kraken-ledgers --map XXBT="Kraken BTC"
# or copy this file and fill in [assets].

date_format = ["yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm:ss.S"]
timezone = "UTC"
unmapped = "error"

[columns]
date = "time"
amount = "amount"
fee = "fee"
balance = "balance"
asset = "asset"
note = "Kraken {type} {subtype?}"
# txid is unique per ledger entry; refid joins the two legs of a trade.
external_id = "{txid}"

[assets]
# XXBT = "Kraken BTC"
# ZEUR = "Kraken EUR"

# The not-yet-credited listing of a deposit or withdrawal.
[[when]]
column = "txid"
matches = "^$"
skip = true
"""#,
    ]
}
