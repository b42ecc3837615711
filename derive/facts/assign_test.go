package facts

import (
	"strings"
	"testing"
)

func TestAssignments(t *testing.T) {
	for _, tc := range []struct {
		text string
		want string // "key=value|…", in order
	}{
		{"```yaml\nautoscaling:\n  enabled: true\n  maxReplicas: 12\n  targetCPUUtilizationPercentage: 60\n```", "maxreplicas=12|targetcpuutilizationpercentage=60"},
		{"DB_POOL_SIZE=10\nexport FLASK_ENV=production", "db_pool_size=10|flask_env=production"},
		{"class Settings(BaseSettings):\n    ledger_timeout_seconds: float = 30.0", "ledger_timeout_seconds=30.0"},
		{`    schedule_interval="30 3 * * *",`, "schedule_interval=30 3 * * *"},
		{"autoscaling:\n  targetCPUUtilizationPercentage: 60   # averageUtilization: 60", "targetcpuutilizationpercentage=60"},
		{"Put it in settings as `LEDGER_TIMEOUT_SECONDS: float = 15.0` so ops can change it.", "ledger_timeout_seconds=15.0"},
		{"alerts go to\n  slack_channel: #dp-alerts", "slack_channel=#dp-alerts"},
		{"      - uses: actions/setup-node@v4\n        with:\n          node-version: 20", "node_version=20"},
		{"  annotations:\n    cert-manager.io/cluster-issuer: le-prod-dns01", "cert_manager.io/cluster_issuer=le-prod-dns01"},
		// Plain words, identifiers, placeholders, CSS and prose are no settings.
		{"name: orders\nimage: registry/x:1.2\nnote: we moved it", ""},
		{"this.maxSize = maxSize;\nconst apiKey = process.env.WEATHER_KEY;", ""},
		{"const apiKey = 'YOUR_API_KEY';", ""},
		{"const apiEndpoint = 'https://api.example.org/geo/1.0/direct';\nlistItem.textContent = 'No results found';\nconst url = `${base}/x`", ""},
		{".card {\n  border-radius: 4px;\n}", ""},
		{"the maxReplicas value is 8 for now", ""},
		// English with a dash is no key outside code; a request is no setting.
		{"Aria Hotel, Shoreditch:\n- Check-in: 3pm\n- £140/night\nMon-Fri: 9am-5pm\nT-shirt: M", ""},
		{"```yaml\nnode-version: 20\n```", "node_version=20"},
		{"could we push DB_POOL_SIZE to 20? if not 10 is fine", ""},
		{"I'm going from part-time to 40 hours", ""},
		{"went with 6 workers in the end, p95 is down to 180ms. and bumped DB_POOL_SIZE up to 10, overflow stays at 10", "db_pool_size=10"},
		{"moved the party to 8 and the budget to 400", ""},
		// A command's long options set to numbers, in code only.
		{"```bash\nrestic forget --prune --keep-daily 7 --keep-weekly 4 --keep-monthly 12\nrestic check --read-data-subset=5%\n```", "restic forget --keep_daily=7|restic forget --keep_weekly=4|restic forget --keep_monthly=12|restic check --read_data_subset=5%"},
		{"```ini\nExecStart=/usr/bin/restic forget --prune --keep-daily 14\n```", "restic forget --keep_daily=14"},
		{"run `pg_dump --jobs=4 mydb` tonight", "pg_dump mydb --jobs=4"},
		{"we keep --keep-daily 7 for now", ""},
		{"```\ncurl --retry 3 --max-time 10 https://x\ncurl --retry 5 https://y\n```", "curl https://x --retry=3|curl https://x --max_time=10|curl https://y --retry=5"},
		{"```\nkubectl scale --replicas=3 deployment/api\n```", "kubectl scale deployment/api --replicas=3"},
		{"```bash\nrestic forget \\\n  --keep-daily 7 \\\n  --prune\n```", "restic forget --keep_daily=7"},
		{"```\n  --keep-daily 7\n```", ""}, // no command: whose option it is is not known
		{"```\nkubectl rollout status deploy/api --timeout=5m\nhelm upgrade api ./chart --timeout 10m\n```", "kubectl rollout status deploy/api --timeout=5m|helm upgrade api ./chart --timeout=10m"},
		// A config directive: an identifier, a number, a semicolon, in code.
		{"```nginx\n    client_max_body_size 25m;\n    location / {\n        proxy_pass http://api:8000;\n        proxy_read_timeout 150s;\n    }\n```", "client_max_body_size=25m|proxy_read_timeout=150s"},
		{"`client_max_body_size 40m;` in the server block.", "client_max_body_size=40m"},
		{"```nginx\nlisten 80;\nworker_processes auto;\n```", ""},                                                       // a plain word; no number
		{"set client_max_body_size 40m; in the server block", ""},                                                       // prose
		{"```nginx\nlocation /a {\n  proxy_read_timeout 30s;\n}\nlocation /b {\n  proxy_read_timeout 90s;\n}\n```", ""}, // two blocks, two values
		// One key set twice to two values: which one changes is not known.
		{"dev:\n  max_conns: 5\nprod:\n  max_conns: 50\n  pool_timeout: 30s", "pool_timeout=30s"},
	} {
		var got []string
		for _, a := range Assignments(tc.text) {
			got = append(got, a.Key+"="+a.Value)
		}
		if g := strings.Join(got, "|"); g != tc.want {
			t.Errorf("Assignments(%q) = %q, want %q", tc.text, g, tc.want)
		}
	}
}
