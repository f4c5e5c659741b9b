#!/bin/sh
# This month's savings progress for a status bar, as waybar's custom-module JSON
# ({"text", "tooltip", "percentage", "class"}); with --plain, one line of text for i3status,
# i3blocks or tmux. Needs savingsctl on PATH (or SAVINGSCTL=/path/to/savingsctl).
#
# waybar (~/.config/waybar/config):
#   "custom/savings": {
#       "exec": "~/.local/bin/waybar-savings.sh",
#       "return-type": "json",
#       "interval": 60,
#       "on-click": "savingsctl month show"
#   }
#
# i3status / i3blocks (~/.config/i3blocks/config):
#   [savings]
#   command=~/.local/bin/waybar-savings.sh --plain
#   interval=60
set -u
ctl=${SAVINGSCTL:-savingsctl}
if ! progress=$("$ctl" --json call month.progress 2>/dev/null); then
    # Not executing yet (or the daemon is down): show the plan instead, or nothing.
    if [ "${1:-}" = "--plain" ]; then echo "savings: -"; else echo '{"text": "savings: -", "tooltip": "savingsd is not answering or this month is not started", "class": "idle"}'; fi
    exit 0
fi
python3 - "$progress" "${1:-}" <<'PY'
import json, sys
progress = json.loads(sys.argv[1])
totals = progress.get("totals", {})
planned = float(totals.get("planned") or 0)        # display only; the daemon's figures stay exact
contributed = float(totals.get("contributed") or 0)
percent = 100 if planned == 0 else min(100, round(100 * contributed / planned))
currency = totals.get("currency", "")
text = f"{progress.get('month', '')}: {percent}% ({totals.get('contributed', '0')}/{totals.get('planned', '0')} {currency})"
lines = [f"{g.get('goal_name')}: {g.get('contributed')}/{g.get('planned')} {g.get('currency', '')}" for g in progress.get("goals", [])]
if sys.argv[2] == "--plain":
    print(text)
else:
    print(json.dumps({"text": text, "tooltip": "\n".join(lines), "percentage": percent,
                      "class": "done" if percent >= 100 else "saving"}))
PY
