// Generated from config/import/*.toml by ImportPresetTests (SAVINGSD_UPDATE_DOCS=1 regenerates it).
// The shipped presets are those files; this copy is what the daemon reads.

public enum ImportPresets {
    /// Each preset's rules file, by name.
    public static let texts: [String: String] = [
        "binance-deposits": #"""
# Binance's deposit history (Wallet > Transaction History > Deposit > Export), one row a
# deposit, every coin in one file:
#   Date(UTC),Coin,Network,Amount,TransactionFee,Address,TXID,Status
# (the export's header, as Binance writes it; seen in public parsers of these files, e.g.
# metko21neon/application's src/assets/withdraws.ts for the withdrawal twin of this export).
# Amount is what was credited; only completed deposits moved money.
#   savingsctl tx import deposits.csv --rules binance-deposits --map BTC="Binance BTC"

date_format = "yyyy-MM-dd HH:mm:ss"
timezone = "UTC"

[columns]
date = "Date(UTC)"
amount = "Amount"
asset = "Coin"
note = "Binance deposit ({Network})"
external_id = "{TXID}"

[assets]
# BTC = "Binance BTC"

# Anything not completed (pending, processing, failed) did not arrive (yet).
[[when]]
column = "Status"
matches = "^(?!Completed$)"
skip = true
"""#,
        "coinbase": #"""
# Coinbase's transaction history (Statements > Generate report > CSV). A few lines of
# explanation come before the header, which starts with "Timestamp":
#   Timestamp,Transaction Type,Asset,Quantity Transacted,Spot Price Currency,
#   Spot Price at Transaction,Subtotal,Total (inclusive of fees and/or spread),
#   Fees and/or Spread,Notes
# (the header as Coinbase's report prints it; the Coinbase record of Export-To-Ghostfolio,
# dickwolff/Export-To-Ghostfolio src/models/coinbaseRecord.ts, reads the same ten columns).
# Quantity Transacted is the asset's amount; fees are charged in the fiat currency and are not
# subtracted. Dates are UTC: "2024-03-01T09:15:02Z", or "2024-03-01 09:15:02 UTC" in newer reports.
# Quantities are unsigned in older reports, so the type says which way the asset moved.
#   savingsctl tx import coinbase.csv --rules coinbase --map BTC="Coinbase BTC"

skip = "^\"?Timestamp\"?,"
date_format = ["iso8601", "yyyy-MM-dd HH:mm:ss 'UTC'"]
timezone = "UTC"

[columns]
date = "Timestamp"
amount = "Quantity Transacted"
asset = "Asset"
note = "Coinbase {Transaction Type}: {Notes}"

[assets]
# BTC = "Coinbase BTC"

[[when]]
column = "Transaction Type"
matches = "^(Sell|Send|Convert|Withdrawal|Advanced Trade Sell)$"
direction = "out"
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
        "kraken-ledgers": #"""
# Kraken's ledger export (History > Export > Ledgers: ledgers.csv), every asset in one file.
# Header, as Kraken documents it ("How to interpret Ledger history fields",
# https://support.kraken.com/hc/en-us/articles/360001169383):
#   "txid","refid","time","type","subtype","aclass","asset","wallet","amount","fee","balance"
# time is UTC ("2024-03-01 09:15:02", sometimes with a fraction of a second); amount is signed;
# the fee is paid from the same asset; balance = old balance + amount - fee.
# Asset codes are Kraken's: XXBT (bitcoin), XETH, ZEUR, ZUSD, ... Map the ones you track:
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
note = "Kraken {type} {subtype}"
# txid is unique per ledger entry; refid joins the two legs of a trade.
external_id = "{txid}"

[assets]
# XXBT = "Kraken BTC"
# ZEUR = "Kraken EUR"
"""#,
    ]
}
