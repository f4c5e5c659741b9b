#!/bin/sh
# Fetches exchange rates with curl and writes them in the format of savingsd's `file` rate
# provider, atomically. Run it from cron or a systemd timer, and point savingsd at the file:
#
#   [rates]
#   provider = "file"
#   file = "/var/lib/savingsd-rates/rates.json"
#
# Usage: fetch-rates.sh OUTPUT [COINS] [FIAT]
#   COINS  CoinGecko coin ids, comma-separated (default bitcoin,ethereum)
#   FIAT   quote currencies, comma-separated (default eur,usd)
# Environment: COINGECKO_URL (default https://api.coingecko.com/api/v3),
#              COINGECKO_API_KEY (optional, sent as x-cg-demo-api-key).
set -eu
output=${1:?usage: fetch-rates.sh OUTPUT [COINS] [FIAT]}
coins=${2:-bitcoin,ethereum}
fiat=${3:-eur,usd}
base=${COINGECKO_URL:-https://api.coingecko.com/api/v3}
tmp=$(mktemp "${output}.XXXXXX")
trap 'rm -f "$tmp"' EXIT
if [ -n "${COINGECKO_API_KEY:-}" ]; then
    curl -fsS --max-time 20 -H "x-cg-demo-api-key: $COINGECKO_API_KEY" \
        "$base/simple/price?ids=$coins&vs_currencies=$fiat&include_last_updated_at=true" > "$tmp.answer"
else
    curl -fsS --max-time 20 "$base/simple/price?ids=$coins&vs_currencies=$fiat&include_last_updated_at=true" > "$tmp.answer"
fi
# CoinGecko ids -> the symbols savingsd uses; extend as needed.
python3 - "$tmp.answer" > "$tmp" <<'PY'
import datetime, json, sys
symbols = {"bitcoin": "BTC", "ethereum": "ETH", "solana": "SOL", "cardano": "ADA", "polkadot": "DOT",
           "litecoin": "LTC", "ripple": "XRP", "dogecoin": "DOGE", "monero": "XMR", "tether": "USDT"}
# Prices stay the text CoinGecko sent: never through a float.
answer = json.load(open(sys.argv[1]), parse_float=str, parse_int=str)
rates = []
for coin, prices in sorted(answer.items()):
    symbol = symbols.get(coin)
    if symbol is None:
        sys.exit(f"fetch-rates: no symbol known for coin id '{coin}'")
    updated = prices.get("last_updated_at")
    as_of = datetime.datetime.fromtimestamp(int(updated), datetime.timezone.utc) if updated else datetime.datetime.now(datetime.timezone.utc)
    for quote, price in sorted(prices.items()):
        if quote == "last_updated_at":
            continue
        rates.append({"base": symbol, "quote": quote.upper(), "rate": price,
                      "as_of": as_of.strftime("%Y-%m-%dT%H:%M:%S.000Z")})
print(json.dumps({"rates": rates}, indent=1))
PY
rm -f "$tmp.answer"
chmod 0644 "$tmp"
mv "$tmp" "$output"
trap - EXIT
