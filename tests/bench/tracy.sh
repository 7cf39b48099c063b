# SPDX-License-Identifier: MIT
# Sourced by tests/bench/run: a CPU scope inside a recorded frame beside
# Tracy's ZoneScopedN in the same loop (tests/bench/tracy_zones.cpp), with
# Tracy's command-line capture server draining the client as it would in
# use. `make bench TRACY=DIR` builds both from Tracy's sources in DIR; the
# target is a quarter of Tracy's cost. Rounds alternate the two programs,
# so that the load of a shared machine falls on both; the medians are
# compared.

TRACY_ROUNDS=${TRACY_ROUNDS:-5}

# One ZoneScopedN figure in ns, or nothing when Tracy's side failed. The
# port is the process's own, so that two benches on one machine never
# meet.
tracy_zone_ns() {
	port=$((20000 + $$ % 20000))
	"$BUILD/tracy/tracy-capture" -a 127.0.0.1 -p "$port" -o "$OUT/tracy.tracy" -f \
		>"$OUT/tracy-capture.log" 2>&1 &
	server=$!
	if TRACY_PORT=$port "$BUILD/bench/tracy-zones" 2>"$OUT/tracy-zones.log" >"$OUT/tracy-zones.out"; then
		wait "$server" || true
		sed -n 's/^tracy inside \([0-9.]*\) .*/\1/p' "$OUT/tracy-zones.out"
	else
		kill "$server" 2>/dev/null || true
		wait "$server" 2>/dev/null || true
	fi
	rm -f "$OUT/tracy.tracy"
}

# tracy_compare CPU-INSIDE-NS: the first round's CPU scope is the one
# already measured; each round after it measures both again.
tracy_compare() {
	if [ -z "${TRACY:-}" ]; then
		echo "  (not compared with Tracy's ZoneScopedN: make bench TRACY=../shared/peers/tracy, or wherever Tracy is)"
		return 0
	fi
	if [ ! -x "$BUILD/bench/tracy-zones" ] || [ ! -x "$BUILD/tracy/tracy-capture" ]; then
		echo "  (not compared with Tracy's ZoneScopedN: $BUILD/bench/tracy-zones not built; make bench TRACY=DIR builds it)"
		return 0
	fi
	crumbs_ns=$1 figures=
	round=1
	while [ "$round" -le "$TRACY_ROUNDS" ]; do
		if [ "$round" -gt 1 ]; then
			set -- $("$BUILD/bench/scopes" 2>/dev/null | sed -n 's/^cpu outside //p' | sed 's/ inside / /')
			crumbs_ns=$4
		fi
		tracy_ns=$(tracy_zone_ns)
		if [ -z "$tracy_ns" ]; then
			echo "  (not compared with Tracy's ZoneScopedN: tracy-zones failed; $OUT/tracy-zones.log says why)"
			return 0
		fi
		figures="$figures $crumbs_ns $tracy_ns"
		round=$((round + 1))
	done
	echo "$figures" | awk -v rows="$rows" -v dev="-" "$MEDIAN$ROW"'
	BEGIN { n = 0 }
	{ for (i = 1; i < NF; i += 2) { c[n] = $i; t[n] = $(i + 1); r[n] = $i / $(i + 1); n++ } }
	END {
		for (i = 0; i < n; i++) { cs = cs sprintf(" %.1f", c[i]); ts = ts sprintf(" %.1f", t[i]); rs = rs sprintf(" %.2f", r[i]) }
		cm = median_of(c, n); tm = median_of(t, n); ratio = cm / tm
		printf "Tracy ZoneScopedN, same loop: %.1f ns         (drained by tracy-capture)\n", tm
		printf "CPU scope / Tracy zone:       %.2fx           (target <= 0.25)                %s\n", ratio, ratio <= 0.25 ? "met" : "MISSED"
		printf "  (medians of %d rounds alternating; crumbs%s ns; Tracy%s ns; ratios%s)\n", n, cs, ts, rs
		row(sprintf("CPU scope inside a recorded frame: %.1f ns (median of %d rounds)", cm, n), sprintf("Tracy ZoneScopedN, drained by tracy-capture: %.1f ns", tm), sprintf("%.2fx", ratio))
	}'
}
